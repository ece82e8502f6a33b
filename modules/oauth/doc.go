// Package oauth is Fennec's OAuth 2.0 provider and web sign-in (issue 17).
//
// Administrators register applications through GET/POST/DELETE
// /api/v4/applications. Browsers sign in on server-rendered pages
// (/users/sign_in, through identity's password check, so directory users
// sign in too) and approve an application on the consent page of
// GET /oauth/authorize (authorization code grant, PKCE optional). Clients
// trade codes, passwords and refresh tokens for access tokens at
// POST /oauth/token, inspect them at GET /oauth/token/info and revoke them
// at POST /oauth/revoke. The link of the account mail (identity's
// password reset token) opens a page that sets the password through
// identity.PasswordResets (GET /users/password/edit, POST or PUT
// /users/password); the "forgot your password" page asks identity for
// such a mail (GET /users/password/new, POST /users/password with
// user[email]).
//
// The module registers a core/auth token resolver: its access tokens
// authenticate API calls (Bearer header or access_token parameter) with
// their scopes (api, read_user, openid) enforced as personal tokens' are,
// and the session cookie authenticates GET and HEAD requests. Users are
// checked on every use, so blocking a user stops their tokens and ends
// their sessions at once.
//
// Administrators impersonate a user from the admin area (POST
// /admin/users/{username}/impersonate): the browser's own session acts as
// that user, with a banner on every page, until POST
// /admin/impersonation/stop turns it back (auth.Principal.Impersonator
// names the administrator meanwhile). It is the one thing the pages do
// with the service itself rather than its contract.
//
// Its contract is package provider (provider.Service: applications,
// grants, token information and revocation, authorization requests, web
// sessions), which every caller goes through, the module's own HTTP
// adapter included; internal/ implements it. It imports core packages and
// the identity module's root package only.
package oauth
