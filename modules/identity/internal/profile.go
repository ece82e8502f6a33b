package internal

import (
	"context"
	"errors"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/event"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The signed-in user's own settings (the /profile pages): what a user may
// change of their account without an administrator. The users API keeps
// these for administrators (UpdateAccount); GitLab's profile pages let
// the user do them, and so do these commands, for the caller only.

// UpdateProfile implements user.Service.
func (s *Service) UpdateProfile(ctx context.Context, in user.ProfileFields) (user.Account, error) {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return user.Account{}, auth.ErrUnauthorized
	}
	// Only the fields a profile has: never an address, a username or a
	// right, whatever a caller puts in Fields.
	f := user.Fields{Name: in.Name, Skype: in.Skype, Linkedin: in.Linkedin, Twitter: in.Twitter,
		WebsiteURL: in.WebsiteURL, Organization: in.Organization, Bio: in.Bio, Location: in.Location}
	var out *User
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, p.UserID())
		if errors.Is(err, store.ErrNotFound) {
			return user.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		applyFields(u, &f)
		if v := validateUser(u, "", false); v != nil {
			return v
		}
		out = u
		return users.Update(tx, u)
	})
	if err != nil {
		return user.Account{}, err
	}
	return accountOf(out), nil
}

// ChangePassword implements user.Service. The current password is checked
// under the sign-in throttle, so the form is no faster way to guess it
// than signing in.
func (s *Service) ChangePassword(ctx context.Context, current, password string) error {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return auth.ErrUnauthorized
	}
	me, err := s.cachedUser(ctx, p.UserID())
	if err != nil {
		return err
	}
	if s.directoryUser(me) {
		return auth.Forbidden("the password is managed by the directory")
	}
	if _, err := s.loginUser(ctx, me.Username, current); err != nil {
		if errors.Is(err, auth.ErrInvalidPassword) {
			return ValidationError{"current_password": {"is invalid"}}
		}
		return err
	}
	if text := passwordProblem(password); text != "" {
		return ValidationError{"password": {text}}
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return err
	}
	err = s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, p.UserID())
		if errors.Is(err, store.ErrNotFound) {
			return user.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		u.PasswordHash = hash
		u.PasswordExpired = false // the user chose it
		if err := users.Update(tx, u); err != nil {
			return err
		}
		keep := int64(0)
		if p.Method == auth.MethodSession {
			keep = p.TokenID
		}
		return s.bus.Publish(tx, event.PasswordChanged{UserID: u.ID, KeepSession: keep})
	})
	if err == nil {
		s.log.Info("password changed by its user", zap.Int64("user_id", p.UserID()))
	}
	return err
}

// CreatePersonalToken implements user.Service: the caller's own personal
// access token, as GitLab's profile page makes one.
func (s *Service) CreatePersonalToken(ctx context.Context, in user.NewToken) (user.Token, error) {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return user.Token{}, auth.ErrUnauthorized
	}
	in.Kind = user.PersonalToken
	return s.issueToken(ctx, p.UserID(), in)
}
