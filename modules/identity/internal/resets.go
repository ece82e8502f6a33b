package internal

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// ResetTokenLifetime is how long a password reset token is valid.
const ResetTokenLifetime = 48 * time.Hour

// NewPasswordResetToken implements identity.PasswordResets: a fresh random
// token for the user, of which only the hash is stored (replacing any
// earlier one), valid for ResetTokenLifetime. Called with the context of a
// store transaction it joins it.
func (s *Service) NewPasswordResetToken(ctx context.Context, userID int64) (string, time.Time, error) {
	token, err := newSecret()
	if err != nil {
		return "", time.Time{}, err
	}
	sum := sha256.Sum256([]byte(token))
	expires := s.now().UTC().Add(ResetTokenLifetime)
	err = s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, uint64(userID))
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		u.ResetTokenHash, u.ResetTokenExpires = sum[:], &expires
		return users.Update(tx, u)
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return token, expires, nil
}
