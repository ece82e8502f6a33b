// Package user is the public contract of the identity module: Service, the
// users API's commands and queries over accounts, SSH keys, secondary
// e-mail addresses and tokens, and the small services other modules take
// (Lookup, Emails, SSHKeys, PasswordResets, Activity, DirectorySync); the
// records they return (Account, Key, Email, Token; Info, what a module may
// know of a user); the inputs of commands (Fields, NewAccount, NewToken);
// the errors; and BasicUser, the view of a user that responses embed (a
// commit status's author, a member, an event's author...), built in one
// place so that every response shows a user alike.
//
// It is a public package of its own, not part of the identity root package,
// because that one imports internal/ (Module()) and internal/ implements
// this: Go forbids the cycle. The root package re-exports the names other
// modules use (identity.Users, identity.UserInfo, identity.BasicUser,
// identity.NewBasicUser, identity.GhostUser...). It imports core/auth only.
package user

import (
	"net/url"
	"time"
)

// Info is the summary of a user that other modules may use.
type Info struct {
	ID            int64
	Username      string
	Name          string
	Email         string
	State         string // active, blocked (directory blocks show as blocked)
	Admin         bool
	External      bool
	AvatarURL     string
	ProjectsLimit int
	CreatedAt     time.Time
}

// BasicUser is GitLab's public (basic) view of a user, the one anyone may
// see. Richer views (identity's extended and full users, a member with its
// access level) embed it.
type BasicUser struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	Username  string  `json:"username"`
	State     string  `json:"state"`
	AvatarURL *string `json:"avatar_url"`
	WebURL    string  `json:"web_url"`
}

// NewBasicUser is u's basic view; baseURL is the server's external URL
// (api.ExternalURLFrom), under which a user's page is /<username>.
func NewBasicUser(baseURL string, u Info) BasicUser {
	v := BasicUser{ID: u.ID, Name: u.Name, Username: u.Username, State: u.State, WebURL: profileURL(baseURL, u.Username)}
	if u.AvatarURL != "" {
		avatar := u.AvatarURL
		v.AvatarURL = &avatar
	}
	return v
}

// GhostUser stands for the deleted user id where their past work is still
// shown (an event, a commit status), as GitLab shows such authors.
func GhostUser(baseURL string, id int64) BasicUser {
	return BasicUser{ID: id, Name: "Ghost User", Username: "ghost", State: "blocked", WebURL: profileURL(baseURL, "ghost")}
}

// profileURL escapes the username as one path segment. Identity's username
// rule admits only URL-safe characters today; the escape keeps web_url a
// valid URL for whatever a looser rule, a directory or an old record brings.
func profileURL(baseURL, username string) string {
	return baseURL + "/" + url.PathEscape(username)
}
