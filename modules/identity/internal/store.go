package internal

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// User is the stored account record.
type User struct {
	ID           int64  `json:"id"`
	Username     string `json:"username"`
	Email        string `json:"email"`
	Name         string `json:"name"`
	PasswordHash []byte `json:"password_hash,omitempty"`
	// PasswordExpired is set when an administrator sets the password: the
	// user must change it at next login.
	PasswordExpired  bool       `json:"password_expired,omitempty"`
	Admin            bool       `json:"admin"`
	State            string     `json:"state"` // active, blocked, ldap_blocked
	External         bool       `json:"external"`
	Bio              *string    `json:"bio"`
	Location         *string    `json:"location"`
	Skype            string     `json:"skype"`
	Linkedin         string     `json:"linkedin"`
	Twitter          string     `json:"twitter"`
	WebsiteURL       string     `json:"website_url"`
	Organization     string     `json:"organization"`
	ProjectsLimit    int        `json:"projects_limit"`
	CanCreateGroup   bool       `json:"can_create_group"`
	ColorSchemeID    int        `json:"color_scheme_id"`
	CreatedAt        time.Time  `json:"created_at"`
	ConfirmedAt      *time.Time `json:"confirmed_at"`
	LastSignInAt     *time.Time `json:"last_sign_in_at"`
	CurrentSignInAt  *time.Time `json:"current_sign_in_at"`
	LastActivityOn   *time.Time `json:"last_activity_on"`
	TwoFactorEnabled bool       `json:"two_factor_enabled"`
	Identities       []Identity `json:"identities"`
	// ResetTokenHash is the SHA-256 of the user's password reset token
	// (the token itself is only ever in the mail), valid until
	// ResetTokenExpires.
	ResetTokenHash    []byte     `json:"reset_token_hash,omitempty"`
	ResetTokenExpires *time.Time `json:"reset_token_expires,omitempty"`
	// ResetRequestedAt is when a reset link was last asked for on the
	// "forgot your password" page (at most one mail a minute).
	ResetRequestedAt *time.Time `json:"reset_requested_at,omitempty"`
}

// Identity links a user to an external provider account.
type Identity struct {
	Provider  string `json:"provider"`
	ExternUID string `json:"extern_uid"`
}

func (u *User) RecordID() int64      { return u.ID }
func (u *User) SetRecordID(id int64) { u.ID = id }

// Token kinds.
const (
	KindPrivate       = "private"       // the user's private token (privatetoken.go)
	KindPersonal      = "personal"      // personal access token
	KindImpersonation = "impersonation" // made by an admin for a user
)

// Token is a stored credential. Only the SHA-256 of the secret is kept: a
// token is found by hashing what the client sent, never by a scan or a slow
// KDF per request (the secret has 120 random bits, so a fast hash is safe).
type Token struct {
	ID        int64      `json:"id"`
	UserID    int64      `json:"user_id"`
	Kind      string     `json:"kind"`
	Name      string     `json:"name"`
	Hash      string     `json:"hash"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	Revoked   bool       `json:"revoked"`
	// Sealed is the secret itself, sealed with the instance key, kept only
	// for the user's private token, which is shown again (privatetoken.go).
	Sealed string `json:"sealed,omitempty"`
}

func (t *Token) RecordID() int64      { return t.ID }
func (t *Token) SetRecordID(id int64) { t.ID = id }

// Active reports whether the token may be used at now.
func (t *Token) Active(now time.Time) bool {
	return !t.Revoked && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

var (
	users = store.NewTable[int64, User]("identity.users",
		store.Index[User]{Name: "username", Unique: true, Keys: func(u *User) []string { return []string{store.Fold(u.Username)} }},
		store.Index[User]{Name: "email", Unique: true, Keys: func(u *User) []string { return []string{store.Fold(u.Email)} }},
		// One local account per external account: provider NUL extern_uid.
		store.Index[User]{Name: "identity", Unique: true, Keys: func(u *User) []string {
			out := make([]string, 0, len(u.Identities))
			for _, id := range u.Identities {
				out = append(out, identityKey(id.Provider, id.ExternUID))
			}
			return out
		}},
		// Pending password reset tokens by the hex of their SHA-256: the
		// reset link finds its user without a scan.
		store.Index[User]{Name: "reset_token", Unique: true, Keys: func(u *User) []string {
			if len(u.ResetTokenHash) == 0 {
				return nil
			}
			return []string{hex.EncodeToString(u.ResetTokenHash)}
		}},
		// GET /users?search= looks in the username, the name and the
		// e-mail (Accounts), through their trigrams.
		store.Index[User]{Name: "search", Search: true, Keys: func(u *User) []string {
			return []string{u.Username, u.Name, u.Email}
		}},
		// The administrators, so that "is this the last one?" reads a
		// handful of rows instead of every user.
		store.Index[User]{Name: "admin", Keys: func(u *User) []string {
			if u.Admin {
				return []string{"1"}
			}
			return nil
		}},
	)
	tokens = store.NewTable[int64, Token]("identity.tokens",
		store.Index[Token]{Name: "hash", Unique: true, Keys: func(t *Token) []string { return []string{t.Hash} }},
		store.Index[Token]{Name: "user", Keys: func(t *Token) []string { return byUser(t.UserID) }},
	)
)

// Key is a user's SSH public key.
type Key struct {
	ID     int64  `json:"id"`
	UserID int64  `json:"user_id"`
	Title  string `json:"title"`
	// Key is the authorized_keys line without options: type, base64, comment.
	Key string `json:"key"`
	// Fingerprint is the SHA-256 fingerprint; a key belongs to one user only.
	Fingerprint string    `json:"fingerprint"`
	CreatedAt   time.Time `json:"created_at"`
}

func (k *Key) RecordID() int64      { return k.ID }
func (k *Key) SetRecordID(id int64) { k.ID = id }

// Email is a secondary e-mail address of a user.
type Email struct {
	ID        int64     `json:"id"`
	UserID    int64     `json:"user_id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
}

func (e *Email) RecordID() int64      { return e.ID }
func (e *Email) SetRecordID(id int64) { e.ID = id }

func identityKey(provider, externUID string) string { return provider + "\x00" + externUID }

func byUser(id int64) []string { return []string{strconv.FormatInt(id, 10)} }

var (
	keys = store.NewTable[int64, Key]("identity.keys",
		store.Index[Key]{Name: "fingerprint", Unique: true, Keys: func(k *Key) []string { return []string{k.Fingerprint} }},
		store.Index[Key]{Name: "user", Keys: func(k *Key) []string { return byUser(k.UserID) }},
	)
	emails = store.NewTable[int64, Email]("identity.emails",
		store.Index[Email]{Name: "email", Unique: true, Keys: func(e *Email) []string { return []string{store.Fold(e.Email)} }},
		store.Index[Email]{Name: "user", Keys: func(e *Email) []string { return byUser(e.UserID) }},
	)
)

// Tables lists the module's tables for bucket declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{users, tokens, keys, emails}
}

// emailTaken reports whether an address is any user's primary or secondary
// e-mail, not counting exceptUser's own addresses.
func emailTaken(tx *store.Tx, address string, exceptUser int64) bool {
	key := store.Fold(address)
	if u, err := users.GetBy(tx, "email", key); err == nil && u.ID != exceptUser {
		return true
	}
	if e, err := emails.GetBy(tx, "email", key); err == nil && (exceptUser == 0 || e.UserID != exceptUser) {
		return true
	}
	return false
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{{
		Module: "identity", Version: 1, Name: "tables",
		// The buckets themselves are declared; version 1 marks the layout.
		Up: func(*store.Tx) error { return nil },
	}, {
		Module: "identity", Version: 2, Name: "index external identities",
		Up: func(tx *store.Tx) error { return users.Reindex(tx, "identity") },
	}, {
		Module: "identity", Version: 3, Name: "index administrators",
		Up: func(tx *store.Tx) error { return users.Reindex(tx, "admin") },
	}, {
		Module: "identity", Version: 4, Name: "index password reset tokens",
		Up: func(tx *store.Tx) error { return users.Reindex(tx, "reset_token") },
	}, {
		Module: "identity", Version: 5, Name: "search index of users",
		Up: func(tx *store.Tx) error { return users.Reindex(tx, "search") },
	}}
}

// otherActiveAdmins counts the active administrators other than userID: an
// instance must keep at least one, or nobody could ever administer it again.
func otherActiveAdmins(tx *store.Tx, userID int64) (int, error) {
	ids, err := users.IDsBy(tx, "admin", "1")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if id == userID {
			continue
		}
		u, err := users.Get(tx, id)
		if err != nil {
			return 0, err
		}
		if u.Admin && u.State == StateActive {
			n++
		}
	}
	return n, nil
}
