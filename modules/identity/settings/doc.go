// Package settings is what an application gives the identity module: its
// section of the configuration (Config, "identity") and, optionally, a
// clock. It is a public package of its own so that the types are defined
// in the open, where internal/ (which reads them) and the root package
// (which re-exports them: identity.Config, identity.Clock) both import
// them; the root cannot define them, since it imports internal/ and Go
// forbids the cycle. It imports no Fennec package.
package settings
