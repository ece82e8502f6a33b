// Package auth says who is calling. It resolves a Principal once per request
// from the credentials GitLab clients send (PRIVATE-TOKEN header or
// private_token parameter, OAuth bearer token or access_token parameter, HTTP
// basic auth for git), applies sudo, and checks token scopes. Background
// work with no request behind it runs as System (the server itself, which
// may do everything) or ForUser (a user's rights); no credential ever
// resolves to either.
//
// It defines the interfaces that modules implement (TokenResolver,
// PasswordAuthenticator, UserLookup) and never stores anything itself. Errors
// are sentinels and small types; core/api maps them to HTTP in one place.
// It imports no other Fennec package.
package auth
