// Package identity owns users and how they prove who they are: accounts
// (the users API, block and unblock, e-mails, SSH keys), passwords,
// sessions (POST /session), private, personal access and impersonation
// tokens, sudo, users' activity days, and the users of auth-provider
// plugins (LDAP: first login, directory sync). It implements the core/auth
// interfaces (TokenResolver, PasswordAuthenticator, UserLookup,
// Provisioner) and creates the administrator on first start.
//
// Other modules use this root package: Users and UserInfo to look users
// up, SSHKeys to find the owner of an SSH key (the repository module's SSH
// server; administrators have GET /keys?fingerprint=), BasicUser and NewBasicUser for the one public view of a user that
// their responses embed, the events UserCreated, UserDeleted and UserBlocked
// (the oauth module ends a blocked user's web sessions on the last),
// PasswordResets (the reset tokens the
// notifications module mails and the oauth module's reset page redeems). The implementation in internal/ is
// private to the module; user and event hold the contracts that internal/
// builds too. It imports core packages and the auth-provider kind of the
// SDK (sdk/authprovider) only.
package identity
