// Command auth-ldap is the auth-provider plugin shipped with Fennec: it
// signs users in against an LDAP directory (OpenLDAP, 389-ds, Active
// Directory) with a service bind, a search for the user's entry and a bind as
// that entry. The host starts it; it does not run by hand.
//
// Settings (a JSON object, see settingsSchema):
//
//	url            ldap://host:389 or ldaps://host:636 (required)
//	bind_dn        service account DN; empty: anonymous search
//	bind_password  its password (required with bind_dn)
//	base           search base DN (required)
//	user_filter    default "(uid=%s)"; every %s becomes the escaped login
//	attributes     {username: uid, email: mail, name: cn, groups: ""}
//	start_tls      upgrade ldap:// with StartTLS
//	ca_cert        PEM CA certificate(s) to trust instead of the system roots
//	timeout        per operation and connection, default "10s"
//
// It imports only sdk/ and third-party packages.
package main

import "github.com/fennec-forge/fennec/sdk/authprovider"

// version is set by the Makefile (-X main.version).
var version = "dev"

func main() {
	log := authprovider.NewLogger("auth-ldap") // before Serve, which redirects stderr
	authprovider.Serve(newDirectory(log))
}
