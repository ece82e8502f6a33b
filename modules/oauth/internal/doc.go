// Package internal implements the OAuth module: applications (store.go,
// apps.go), the token, token-info and revoke endpoints (token.go), the
// authorization endpoint and the sign-in pages (web.go, pages.go and the
// embedded templates), and browser sessions (session.go). Secrets of every
// kind are stored as SHA-256 hashes only.
package internal
