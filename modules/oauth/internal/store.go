package internal

import (
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// Application is a registered OAuth client. Its secret is kept as a
// SHA-256 hash only: it is 256 random bits, so a fast hash is as safe as a
// slow one and costs nothing on every token request.
type Application struct {
	ID           provider.AppID `json:"id"`
	UID          string         `json:"uid"` // the client_id
	SecretHash   string         `json:"secret_hash"`
	Name         string         `json:"name"`
	RedirectURIs []string       `json:"redirect_uris"`
	Scopes       []string       `json:"scopes"`
	Confidential bool           `json:"confidential"`
	// OwnerID is the user who registered it on their applications page; 0
	// for one an administrator registered through the API.
	OwnerID   int64     `json:"owner_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func (a *Application) RecordID() provider.AppID      { return a.ID }
func (a *Application) SetRecordID(id provider.AppID) { a.ID = id }

// Grant is an authorization code: single use, short-lived, bound to the
// client, the redirect URI and (with PKCE) the client's verifier. A used
// grant is kept until it expires, so that a second use of its code is
// recognised and the tokens it gave are revoked (RFC 6749 section 4.1.2).
type Grant struct {
	ID              int64          `json:"id"`
	CodeHash        string         `json:"code_hash"`
	AppID           provider.AppID `json:"app_id"`
	UserID          int64          `json:"user_id"`
	RedirectURI     string         `json:"redirect_uri"`
	Scopes          []string       `json:"scopes"`
	Challenge       string         `json:"challenge,omitempty"`
	ChallengeMethod string         `json:"challenge_method,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	ExpiresAt       time.Time      `json:"expires_at"`
	UsedAt          *time.Time     `json:"used_at,omitempty"`
}

func (g *Grant) RecordID() int64      { return g.ID }
func (g *Grant) SetRecordID(id int64) { g.ID = id }

// Token is an access token and its refresh token, both kept as SHA-256
// hashes. AppID is 0 for a password grant made without a client.
type Token struct {
	ID          int64          `json:"id"`
	AccessHash  string         `json:"access_hash"`
	RefreshHash string         `json:"refresh_hash"`
	AppID       provider.AppID `json:"app_id,omitempty"`
	GrantID     int64          `json:"grant_id,omitempty"`
	UserID      int64          `json:"user_id"`
	Scopes      []string       `json:"scopes"`
	CreatedAt   time.Time      `json:"created_at"`
	ExpiresIn   int64          `json:"expires_in"` // seconds
	RevokedAt   *time.Time     `json:"revoked_at,omitempty"`
	// Family is the id of the first token of the refresh chain this one
	// was rotated from (0 for that first token itself): a spent refresh
	// token presented again revokes the whole chain.
	Family int64 `json:"family,omitempty"`
}

// family is the chain t belongs to: its first token's id.
func (t *Token) family() int64 {
	if t.Family != 0 {
		return t.Family
	}
	return t.ID
}

func (t *Token) RecordID() int64      { return t.ID }
func (t *Token) SetRecordID(id int64) { t.ID = id }

// expired reports whether the access token is past its lifetime at now.
func (t *Token) expired(now time.Time) bool {
	return !now.Before(t.CreatedAt.Add(time.Duration(t.ExpiresIn) * time.Second))
}

// Session is a browser signed in on the pages; the cookie holds the
// secret, the store its hash.
type Session struct {
	ID        int64     `json:"id"`
	Hash      string    `json:"hash"`
	UserID    int64     `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// ImpersonatorID is the administrator whose session this is while it
	// acts as UserID (impersonation.go); 0 otherwise.
	ImpersonatorID int64 `json:"impersonator_id,omitempty"`
	// UserAgent and IP are the browser's at sign-in, for the user's list
	// of their sessions (bounded; empty for sessions older than them).
	UserAgent string `json:"user_agent,omitempty"`
	IP        string `json:"ip,omitempty"`
}

func (s *Session) RecordID() int64      { return s.ID }
func (s *Session) SetRecordID(id int64) { s.ID = id }

var (
	apps = store.NewTable[provider.AppID, Application]("oauth.applications",
		store.Index[Application]{Name: "uid", Unique: true, Keys: func(a *Application) []string { return []string{a.UID} }},
		store.Index[Application]{Name: "owner", Keys: func(a *Application) []string {
			if a.OwnerID == 0 {
				return nil
			}
			return []string{store.IDString(a.OwnerID)}
		}},
	)
	grants = store.NewTable[int64, Grant]("oauth.grants",
		store.Index[Grant]{Name: "code", Unique: true, Keys: func(g *Grant) []string { return []string{g.CodeHash} }},
		store.Index[Grant]{Name: "app", Keys: func(g *Grant) []string { return []string{store.IDString(g.AppID)} }},
		store.Index[Grant]{Name: "user", Keys: func(g *Grant) []string { return []string{store.IDString(g.UserID)} }},
	)
	tokens = store.NewTable[int64, Token]("oauth.tokens",
		store.Index[Token]{Name: "access", Unique: true, Keys: func(t *Token) []string { return []string{t.AccessHash} }},
		store.Index[Token]{Name: "refresh", Unique: true, Keys: func(t *Token) []string { return []string{t.RefreshHash} }},
		store.Index[Token]{Name: "app", Keys: func(t *Token) []string {
			if t.AppID == 0 {
				return nil
			}
			return []string{store.IDString(t.AppID)}
		}},
		store.Index[Token]{Name: "grant", Keys: func(t *Token) []string {
			if t.GrantID == 0 {
				return nil
			}
			return []string{store.IDString(t.GrantID)}
		}},
		store.Index[Token]{Name: "user", Keys: func(t *Token) []string { return []string{store.IDString(t.UserID)} }},
	)
	sessions = store.NewTable[int64, Session]("oauth.sessions",
		store.Index[Session]{Name: "hash", Unique: true, Keys: func(s *Session) []string { return []string{s.Hash} }},
		store.Index[Session]{Name: "user", Keys: func(s *Session) []string { return []string{store.IDString(s.UserID)} }},
		// The sessions an administrator impersonates others with: theirs
		// too, to end when they are blocked or deleted.
		store.Index[Session]{Name: "impersonator", Keys: func(s *Session) []string {
			if s.ImpersonatorID == 0 {
				return nil
			}
			return []string{store.IDString(s.ImpersonatorID)}
		}},
	)
)

// Tables lists the module's tables for declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{apps, grants, tokens, sessions}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{{Module: "oauth", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }}}
}

// deleteTokensBy removes every token whose key in index is key.
func deleteTokensBy(tx *store.Tx, index, key string) error {
	_, err := tokens.DeleteBy(tx, index, key)
	return err
}

// removeApp deletes an application with its grants and tokens: a deleted
// client's tokens stop working at once.
func removeApp(tx *store.Tx, id provider.AppID) error {
	if _, err := grants.DeleteBy(tx, "app", store.IDString(id)); err != nil {
		return err
	}
	if err := deleteTokensBy(tx, "app", store.IDString(id)); err != nil {
		return err
	}
	return apps.Delete(tx, id)
}

// removeUser deletes everything a deleted user held here, the
// applications they registered included.
func removeUser(tx *store.Tx, userID int64) error {
	owned, err := apps.IDsBy(tx, "owner", store.IDString(userID))
	if err != nil {
		return err
	}
	for _, id := range owned {
		if err := removeApp(tx, id); err != nil {
			return err
		}
	}
	if _, err := grants.DeleteBy(tx, "user", store.IDString(userID)); err != nil {
		return err
	}
	if err := deleteTokensBy(tx, "user", store.IDString(userID)); err != nil {
		return err
	}
	return endSessions(tx, userID)
}

// endSessions deletes every web session of a user (deleted or blocked),
// those they impersonate someone with included.
func endSessions(tx *store.Tx, userID int64) error {
	if _, err := sessions.DeleteBy(tx, "user", store.IDString(userID)); err != nil {
		return err
	}
	_, err := sessions.DeleteBy(tx, "impersonator", store.IDString(userID))
	return err
}

// endSessionsBut deletes the web sessions of a user but keep (0: all).
func endSessionsBut(tx *store.Tx, userID, keep int64) error {
	ids, err := sessions.IDsBy(tx, "user", store.IDString(userID))
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id == keep {
			continue
		}
		if err := sessions.Delete(tx, id); err != nil {
			return err
		}
	}
	return nil
}
