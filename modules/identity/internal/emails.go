package internal

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The secondary e-mail addresses of user.Service. The HTTP adapter is
// httpemails.go.

// emailOf is the contract's record of e.
func emailOf(e *Email) user.Email {
	return user.Email{ID: e.ID, UserID: e.UserID, Email: e.Email, CreatedAt: e.CreatedAt}
}

func validEmail(address string) bool {
	a, err := mail.ParseAddress(address)
	return err == nil && a.Address == address && len(address) <= 255
}

// SecondaryEmails implements user.Service.
func (s *Service) SecondaryEmails(ctx context.Context, userID int64, offset, limit int) ([]user.Email, int, error) {
	if err := mayManage(ctx, userID); err != nil {
		return nil, 0, err
	}
	return listByUser(ctx, s.db, emails, userID, offset, limit, emailOf)
}

// SecondaryEmail implements user.Service.
func (s *Service) SecondaryEmail(ctx context.Context, userID, emailID int64) (user.Email, error) {
	if err := mayManage(ctx, userID); err != nil {
		return user.Email{}, err
	}
	var e *Email
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		e, err = emails.Get(tx, emailID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || emailID <= 0 || (e != nil && e.UserID != userID) {
		return user.Email{}, user.ErrEmailNotFound
	}
	if err != nil {
		return user.Email{}, err
	}
	return emailOf(e), nil
}

// AddEmail implements user.Service.
func (s *Service) AddEmail(ctx context.Context, userID int64, address string) (user.Email, error) {
	if err := mayManage(ctx, userID); err != nil {
		return user.Email{}, err
	}
	if _, err := s.userByID(ctx, userID); err != nil {
		return user.Email{}, err
	}
	address = strings.TrimSpace(address)
	if address == "" {
		return user.Email{}, ValidationError{"email": {"can't be blank"}}
	}
	if !validEmail(address) {
		return user.Email{}, ValidationError{"email": {"is invalid"}}
	}
	e := &Email{UserID: userID, Email: address, CreatedAt: s.now().UTC()}
	err := s.update(ctx, func(tx *store.Tx) error {
		if emailTaken(tx, address, 0) {
			return ValidationError{"email": {"has already been taken"}}
		}
		return emails.Insert(tx, e)
	})
	if err != nil {
		return user.Email{}, conflictAsValidation(err)
	}
	return emailOf(e), nil
}

// DeleteEmail implements user.Service.
func (s *Service) DeleteEmail(ctx context.Context, userID, emailID int64) (user.Email, error) {
	if err := mayManage(ctx, userID); err != nil {
		return user.Email{}, err
	}
	e, err := deleteOwnedRow(ctx, s, emails, userID, emailID, user.ErrEmailNotFound)
	if err != nil {
		return user.Email{}, err
	}
	return emailOf(e), nil
}
