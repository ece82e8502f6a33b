// Package identity owns users and how they prove who they are: accounts
// (the users API, block and unblock, e-mails, SSH keys), passwords,
// sessions (POST /session), private, personal access and impersonation
// tokens, sudo, users' activity days, and the users of auth-provider
// plugins (LDAP: first login, directory sync). It implements the core/auth
// interfaces (TokenResolver, PasswordAuthenticator, UserLookup,
// Provisioner) and creates the administrator on first start.
//
// Its contract is defined in the open, in public packages that internal/
// implements: user (user.Service, the users API's commands for an HTTP
// request, a page or an admin command alike; the small services other
// modules take; the records, inputs and errors), event (UserCreated,
// UserDeleted, UserBlocked, PasswordResetRequested) and settings (Config,
// Clock). This root package is Module() and re-exports the names other
// modules use: Users and UserInfo to look users up, SSHKeys to find the
// owner of an SSH key (the repository module's SSH server), BasicUser and
// NewBasicUser for the one public view of a user that their responses
// embed, the events (the oauth module ends a blocked user's web sessions on
// UserBlocked), PasswordResets (the reset tokens the notifications module
// mails and the oauth module's reset page redeems). internal/ is private to
// the module; its HTTP adapter is its http*.go files. It imports core
// packages and the auth-provider kind of the SDK (sdk/authprovider) only.
package identity
