package internal

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// DirectoryProvider is an external auth provider (an LDAP plugin, an
// embedder's in-process one) in the order the configuration lists them. Its
// Name is the provider of the identities it creates ("ldapmain").
type DirectoryProvider struct {
	Name     string
	Provider authprovider.Provider
}

// SetProviders installs the external providers tried after the local
// password check. Called once while the application is assembled.
func (s *Service) SetProviders(p []DirectoryProvider) { s.providers = p }

// verifyLogin checks a login and password: the local password first, then
// each external provider in order. A rejection moves on to the next provider;
// a provider that is down is skipped with a warning, so local logins keep
// working whatever happens to plugins. When nobody accepted the login and a
// provider was down, the answer is auth.ErrProviderUnavailable (503, try
// again), not a wrong password: the directory may well know the user, and a
// 401 would send them to reset a password that is right. Callers go through
// loginUser, which throttles (and does not count such an attempt).
func (s *Service) verifyLogin(ctx context.Context, login, password string) (*User, error) {
	u, localErr := s.checkPassword(ctx, login, password)
	if localErr == nil || len(s.providers) == 0 || password == "" || login == "" {
		return u, localErr
	}
	if errors.Is(localErr, auth.ErrUnauthorized) {
		return nil, localErr // a blocked local account: no second chances
	}
	unavailable := false
	for _, p := range s.providers {
		id, err := p.Provider.Authenticate(ctx, login, password)
		switch {
		case err == nil:
			return s.linkIdentity(ctx, p.Name, id)
		case errors.Is(err, authprovider.ErrInvalidCredentials), errors.Is(err, authprovider.ErrUnknownUser),
			errors.Is(err, authprovider.ErrDisabled):
			continue
		default:
			unavailable = true
			s.log.Warn("auth provider failed; trying the next one", zap.String("provider", p.Name), zap.Error(err))
		}
	}
	if unavailable {
		return nil, auth.ErrProviderUnavailable
	}
	return nil, auth.ErrInvalidPassword
}

var usernameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// linkIdentity finds the local account of an external identity, creating it
// on first login and refreshing name and e-mail afterwards. An account is
// never linked by e-mail alone: an address owned by another local account
// refuses the login instead of handing that account over.
func (s *Service) linkIdentity(ctx context.Context, provider string, id authprovider.Identity) (*User, error) {
	if id.ExternalID == "" {
		return nil, fmt.Errorf("identity: provider %s returned no external id", provider)
	}
	var out *User
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.GetBy(tx, "identity", identityKey(provider, id.ExternalID))
		switch {
		case err == nil:
			if u.State == StateBlocked {
				return auth.ErrUnauthorized
			}
			changed := false
			if u.State == StateLDAPBlocked { // the directory vouches for them again
				u.State, changed = StateActive, true
			}
			if id.Name != "" && id.Name != u.Name {
				u.Name, changed = id.Name, true
			}
			if id.Email != "" && !strings.EqualFold(id.Email, u.Email) && validEmail(id.Email) && !emailTaken(tx, id.Email, u.ID) {
				u.Email, changed = id.Email, true
			}
			if changed {
				if err := users.Update(tx, u); err != nil {
					return err
				}
			}
			out = u
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if !validEmail(id.Email) || emailTaken(tx, id.Email, 0) {
			s.log.Warn("external login refused: its e-mail is missing, invalid or owned by another account",
				zap.String("provider", provider), zap.String("username", id.Username))
			return auth.ErrInvalidPassword
		}
		now := s.now().UTC()
		name := id.Name
		if name == "" {
			name = id.Username
		}
		u = &User{
			Username: freeUsername(tx, id.Username), Email: id.Email, Name: name, State: StateActive,
			ProjectsLimit: 100000, CanCreateGroup: true, ColorSchemeID: 1, CreatedAt: now, ConfirmedAt: &now,
			Identities: []Identity{{Provider: provider, ExternUID: id.ExternalID}},
		}
		if err := users.Insert(tx, u); err != nil {
			return err
		}
		if err := s.bus.Publish(tx, userCreated(u)); err != nil {
			return err
		}
		out = u
		return nil
	})
	return out, err
}

// freeUsername derives a valid, unused username from a directory's one:
// alice, alice1, alice2... (admin, a reserved name, becomes admin1).
func freeUsername(tx *store.Tx, want string) string {
	base := strings.Trim(usernameUnsafe.ReplaceAllString(want, "_"), "-.")
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".git"), ".atom")
	if base == "" {
		base = "user"
	}
	if len(base) > 200 {
		base = base[:200]
	}
	name := base
	for i := 1; ; i++ {
		if _, err := users.GetBy(tx, "username", store.Fold(name)); errors.Is(err, store.ErrNotFound) && !ReservedNamespace(name) {
			return name
		}
		name = fmt.Sprintf("%s%d", base, i)
	}
}

// SyncDirectory asks every provider that can sync which of its users still
// exist: the missing ones become ldap_blocked (they cannot sign in, and the
// API cannot unblock them), and the ones back in the directory are active
// again. It returns how many users it blocked and unblocked.
func (s *Service) SyncDirectory(ctx context.Context) (blocked, unblocked int, err error) {
	for _, p := range s.providers {
		syncer, ok := p.Provider.(authprovider.UserSyncer)
		if !ok {
			continue
		}
		linked := map[string]int64{}
		err := s.db.View(ctx, func(tx *store.Tx) error {
			return users.Scan(tx, false, 0, func(u *User) (bool, error) {
				for _, id := range u.Identities {
					if id.Provider == p.Name {
						linked[id.ExternUID] = u.ID
					}
				}
				return true, nil
			})
		})
		if err != nil || len(linked) == 0 {
			if err != nil {
				return blocked, unblocked, err
			}
			continue
		}
		ids := make([]string, 0, len(linked))
		for dn := range linked {
			ids = append(ids, dn)
		}
		present, err := syncer.SyncUsers(ctx, ids)
		if errors.Is(err, authprovider.ErrNotSupported) {
			continue
		}
		if err != nil {
			// Never block anyone because the directory could not be asked.
			s.log.Warn("directory sync failed; nobody blocked", zap.String("provider", p.Name), zap.Error(err))
			continue
		}
		still := map[string]bool{}
		for _, id := range present {
			still[id.ExternalID] = true
		}
		var nb, nu int // counted per run: the function may run again
		err = s.update(ctx, func(tx *store.Tx) error {
			nb, nu = 0, 0
			for dn, userID := range linked {
				u, err := users.Get(tx, userID)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				switch {
				case !still[dn] && u.State == StateActive:
					u.State = StateLDAPBlocked
					nb++
				case still[dn] && u.State == StateLDAPBlocked:
					u.State = StateActive
					nu++
				default:
					continue
				}
				if err := users.Update(tx, u); err != nil {
					return err
				}
				if u.State == StateLDAPBlocked {
					if err := s.blocked(tx, u); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return blocked, unblocked, err
		}
		blocked, unblocked = blocked+nb, unblocked+nu
	}
	return blocked, unblocked, nil
}

var _ fennec.Runner = (*Service)(nil)

// Run makes the dummy password hash, then synchronises the directory
// every configured interval (the first time after at most a minute) until
// ctx ends.
func (s *Service) Run(ctx context.Context) error {
	s.dummyHash()
	every := s.cfg.DirectorySyncInterval
	if every <= 0 {
		every = time.Hour
	}
	return fennec.Every(ctx, min(time.Minute, every), every, 10*time.Minute, func(ctx context.Context) {
		b, u, err := s.SyncDirectory(ctx)
		if err != nil {
			s.log.Warn("directory sync failed", zap.Error(err))
		} else if b+u > 0 {
			s.log.Info("directory sync", zap.Int("blocked", b), zap.Int("unblocked", u))
		}
	})
}
