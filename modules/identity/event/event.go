// Package event is the contract of the events the identity module publishes
// (through the core/events outbox). It is a public package of its own, not
// internal/, so the contract is defined where other modules can read it, and
// apart from the module's root package only because that one imports
// internal/ (Module()) and internal/ publishes these types: Go forbids the
// cycle. The root package re-exports every name here.
//
// The payloads are persisted in the outbox, so their JSON is frozen.
package event

import "time"

// UserDeleted is published when an administrator deletes a user. The user's
// keys, e-mails and tokens are gone with it; modules owning other data of the
// user decide what happens to it.
type UserDeleted struct {
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	// Name and Email are the user's as they were (system hooks send them).
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (UserDeleted) EventTopic() string { return "identity.user_deleted" }

// UserBlocked is published in the transaction that blocks a user: by an
// administrator (State "blocked") or by directory synchronisation (State
// "ldap_blocked"). A blocked user's credentials are refused while the block
// lasts; modules holding sign-ins of their own (web sessions) end them, so
// that unblocking does not bring them back.
type UserBlocked struct {
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	State    string `json:"state"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (UserBlocked) EventTopic() string { return "identity.user_blocked" }

// PasswordChanged is published in the transaction that changes a user's
// password, by the user on their profile (KeepSession: the web session
// they did it from, which stays signed in) or through a reset link
// (KeepSession 0). Modules holding sign-ins of their own end the others,
// as GitLab signs every other browser out: whoever knew the old password
// is out.
type PasswordChanged struct {
	UserID      int64 `json:"user_id"`
	KeepSession int64 `json:"keep_session,omitempty"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (PasswordChanged) EventTopic() string { return "identity.password_changed" }

// UserCreated is published in the transaction that creates a user (by an
// administrator, the provisioning API, or a first sign-in through an auth
// provider). ResetPassword says an administrator created the user with
// reset_password: they were given no password they know and are to be
// sent a link to choose one (the notifications module mails it).
type UserCreated struct {
	UserID        int64  `json:"user_id"`
	Username      string `json:"username"`
	Name          string `json:"name"`
	Email         string `json:"email"`
	ResetPassword bool   `json:"reset_password,omitempty"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (UserCreated) EventTopic() string { return "identity.user_created" }

// PasswordResetRequested is published when someone asks, on the "forgot
// your password" page, for a reset link for an active account that keeps
// its own password: the notifications module mails the link to Email (the
// account's primary address). Nothing is published for an unknown address,
// a blocked or directory account, or a second request within a minute.
// RequestedAt tells two requests apart.
type PasswordResetRequested struct {
	UserID      int64     `json:"user_id"`
	Username    string    `json:"username"`
	Name        string    `json:"name"`
	Email       string    `json:"email"`
	RequestedAt time.Time `json:"requested_at"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (PasswordResetRequested) EventTopic() string { return "identity.password_reset_requested" }
