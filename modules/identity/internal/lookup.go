package internal

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// UserInfo is the summary of a user that other modules may use; its
// contract is package user.
type UserInfo = user.Info

func infoOf(u *User) UserInfo {
	return UserInfo{ID: u.ID, Username: u.Username, Name: u.Name, Email: u.Email, State: user.PublicState(u.State), Admin: u.Admin,
		External: u.External, AvatarURL: gravatar(u.Email), ProjectsLimit: u.ProjectsLimit, CreatedAt: u.CreatedAt}
}

// accountOf is the contract's record of u: everything but its secrets. It
// shares no memory with u, which may be the cache's.
func accountOf(u *User) user.Account {
	a := user.Account{
		ID: u.ID, Username: u.Username, Email: u.Email, Name: u.Name, State: u.State,
		Admin: u.Admin, External: u.External, AvatarURL: gravatar(u.Email),
		Bio: clone(u.Bio), Location: clone(u.Location), Skype: u.Skype, Linkedin: u.Linkedin, Twitter: u.Twitter,
		WebsiteURL: u.WebsiteURL, Organization: u.Organization, ProjectsLimit: u.ProjectsLimit,
		CanCreateGroup: u.CanCreateGroup, ColorSchemeID: u.ColorSchemeID, TwoFactorEnabled: u.TwoFactorEnabled,
		PasswordExpired: u.PasswordExpired, CreatedAt: u.CreatedAt, ConfirmedAt: clone(u.ConfirmedAt),
		LastSignInAt: clone(u.LastSignInAt), CurrentSignInAt: clone(u.CurrentSignInAt), LastActivityOn: clone(u.LastActivityOn),
		Identities: make([]user.Identity, 0, len(u.Identities)),
	}
	for _, id := range u.Identities {
		a.Identities = append(a.Identities, user.Identity(id))
	}
	return a
}

// clone is a copy of *p (nil for nil).
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// gravatar is the avatar URL of a user without an upload, as GitLab builds it.
func gravatar(email string) string {
	sum := md5.Sum([]byte(strings.ToLower(strings.TrimSpace(email))))
	return "https://www.gravatar.com/avatar/" + hex.EncodeToString(sum[:]) + "?s=80&d=identicon"
}

// UserByID implements identity.Users.
func (s *Service) UserByID(ctx context.Context, id int64) (UserInfo, error) {
	u, err := s.cachedUser(ctx, id)
	if err != nil {
		return UserInfo{}, err
	}
	return infoOf(u), nil
}

// UserByUsername implements identity.Users.
func (s *Service) UserByUsername(ctx context.Context, username string) (UserInfo, error) {
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		u, err = users.GetBy(tx, "username", store.Fold(username))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return UserInfo{}, auth.ErrUserNotFound
	}
	if err != nil {
		return UserInfo{}, err
	}
	return infoOf(u), nil
}

// UserByEmail implements identity.Emails.
func (s *Service) UserByEmail(ctx context.Context, email string) (UserInfo, error) {
	key := store.Fold(email)
	if key == "" {
		return UserInfo{}, auth.ErrUserNotFound
	}
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if u, err = users.GetBy(tx, "email", key); !errors.Is(err, store.ErrNotFound) {
			return err
		}
		e, err := emails.GetBy(tx, "email", key)
		if err != nil {
			return err
		}
		u, err = users.Get(tx, e.UserID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return UserInfo{}, auth.ErrUserNotFound
	}
	if err != nil {
		return UserInfo{}, err
	}
	return infoOf(u), nil
}

// ConfirmedEmails implements identity.Emails: the primary address when it
// is confirmed, then the secondary ones (which need no confirmation here),
// in the order they were added.
func (s *Service) ConfirmedEmails(ctx context.Context, userID int64) ([]string, error) {
	var out []string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, userID)
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		if u.ConfirmedAt != nil {
			out = append(out, u.Email)
		}
		ids, err := emails.IDsBy(tx, "user", byUser(userID)[0])
		if err != nil {
			return err
		}
		for _, id := range ids {
			e, err := emails.Get(tx, id)
			if err != nil {
				return err
			}
			out = append(out, e.Email)
		}
		return nil
	})
	return out, err
}
