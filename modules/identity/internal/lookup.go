package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// UserInfo is the summary of a user that other modules may use; its
// contract is package user.
type UserInfo = user.Info

func infoOf(u *User) UserInfo {
	state := u.State
	if state == StateLDAPBlocked {
		state = StateBlocked
	}
	return UserInfo{ID: int64(u.ID), Username: u.Username, Name: u.Name, Email: u.Email, State: state, Admin: u.Admin,
		External: u.External, AvatarURL: gravatar(u.Email), ProjectsLimit: u.ProjectsLimit, CreatedAt: u.CreatedAt}
}

// UserByID implements identity.Users.
func (s *Service) UserByID(ctx context.Context, id int64) (UserInfo, error) {
	u, err := s.cachedUser(ctx, uint64(id))
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
		u, err := users.Get(tx, uint64(userID))
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		if u.ConfirmedAt != nil {
			out = append(out, u.Email)
		}
		ids, err := emails.IDsBy(tx, "user", byUser(uint64(userID))[0])
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
