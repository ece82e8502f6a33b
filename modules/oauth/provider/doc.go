// Package provider is the public contract of the OAuth module, Fennec's
// OAuth 2.0 provider: the Service that registers applications (by
// administrators, or by users for themselves), issues, inspects and
// revokes tokens (the password, authorization code and refresh grants),
// checks and grants authorization requests, and signs browsers in and out
// (web sessions); its records (Application, Tokens, TokenInfo,
// Authorization, Session), inputs and errors.
//
// An HTTP request, a page, an admin command and an embedder's Go code all
// go through this Service; the module's HTTP adapter only reads the
// requests (forms, cookies, HTTP basic client credentials), calls it,
// renders the pages and RFC 6749's JSON answers, and maps the errors below
// to them.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the
// cycle. It imports core/auth only.
package provider
