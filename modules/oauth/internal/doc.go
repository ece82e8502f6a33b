// Package internal implements the OAuth module: provider.Service over the
// store (store.go), with applications (apps.go), the token endpoint's
// grants, token information and revocation (grants.go), the authorization
// endpoint's checks and codes (authorize.go), browser sessions
// (session.go) and the sweep (sweep.go); and its HTTP adapter, the http*.go
// files: the applications API (http.go), the OAuth endpoints
// (httptoken.go), the authorization and sign-in pages (httpweb.go), the
// user's applications page (httpownapps.go), the password reset pages
// over identity (httpreset.go) and the page templates (httppages.go and
// templates/). Secrets of every kind are stored as SHA-256 hashes only.
package internal
