package internal

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// EmailView is the e-mail resource.
type EmailView struct {
	ID    uint64 `json:"id"`
	Email string `json:"email"`
}

func emailView(e *Email) EmailView { return EmailView{ID: e.ID, Email: e.Email} }

type emailBody struct {
	Email string `json:"email" required:"true"`
}

type emailInput struct{ Body emailBody }

type userEmailInput struct {
	UserIDPath
	Body emailBody
}

type EmailIDPath struct {
	EmailID int64 `path:"email_id"`
}

type UserEmailIDPath struct {
	UserIDPath
	EmailIDPath
}

type emailOutput struct{ Body *EmailView }

type emailsOutput struct {
	api.PageHeaders
	Body []EmailView
}

type userEmailListInput struct {
	UserIDPath
	api.PageParams
}

var errEmailNotFound = errors.New("identity: e-mail not found")

func (s *Service) registerEmails(a *api.API) {
	tags := []string{"emails"}
	api.Register(a, api.Op{ID: "list-own-emails", Method: http.MethodGet, Path: "/user/emails", Tags: tags,
		Summary: "The caller's secondary e-mail addresses", Access: api.SignedIn}, func(ctx context.Context, in *keyListInput) (*emailsOutput, error) {
		return s.listEmails(ctx, auth.FromContext(ctx).UserID(), in.PageParams)
	})
	api.Register(a, api.Op{ID: "list-user-emails", Method: http.MethodGet, Path: "/users/{id}/emails", Tags: tags,
		Summary: "A user's secondary e-mail addresses (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userEmailListInput) (*emailsOutput, error) {
		if _, err := s.userByID(ctx, in.ID); err != nil {
			return nil, err
		}
		return s.listEmails(ctx, in.ID, in.PageParams)
	})
	api.Register(a, api.Op{ID: "get-own-email", Method: http.MethodGet, Path: "/user/emails/{email_id}", Tags: tags,
		Summary: "One of the caller's e-mail addresses", Access: api.SignedIn}, func(ctx context.Context, in *EmailIDPath) (*emailOutput, error) {
		var e *Email
		err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			e, err = emails.Get(tx, uint64(in.EmailID))
			return err
		})
		if errors.Is(err, store.ErrNotFound) || in.EmailID <= 0 || (e != nil && int64(e.UserID) != auth.FromContext(ctx).UserID()) {
			return nil, api.NotFound("Email")
		}
		if err != nil {
			return nil, err
		}
		v := emailView(e)
		return &emailOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "add-own-email", Method: http.MethodPost, Path: "/user/emails", Tags: tags,
		Summary: "Add a secondary e-mail address", Access: api.SignedIn}, func(ctx context.Context, in *emailInput) (*emailOutput, error) {
		return s.addEmail(ctx, auth.FromContext(ctx).UserID(), in.Body.Email)
	})
	api.Register(a, api.Op{ID: "add-user-email", Method: http.MethodPost, Path: "/users/{id}/emails", Tags: tags,
		Summary: "Add a secondary e-mail address for a user (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userEmailInput) (*emailOutput, error) {
		if _, err := s.userByID(ctx, in.ID); err != nil {
			return nil, err
		}
		return s.addEmail(ctx, in.ID, in.Body.Email)
	})
	api.Register(a, api.Op{ID: "delete-own-email", Method: http.MethodDelete, Path: "/user/emails/{email_id}", Tags: tags,
		Summary: "Delete a secondary e-mail address; 200 even when missing", Access: api.SignedIn, Status: http.StatusOK},
		func(ctx context.Context, in *EmailIDPath) (*maybeOutput, error) {
			out, err := s.deleteEmail(ctx, auth.FromContext(ctx).UserID(), in.EmailID)
			if errors.Is(err, errEmailNotFound) {
				return nothing(), nil // idempotent
			}
			if err != nil {
				return nil, err
			}
			return &maybeOutput{Body: out.Body}, nil
		})
	api.Register(a, api.Op{ID: "delete-user-email", Method: http.MethodDelete, Path: "/users/{id}/emails/{email_id}", Tags: tags,
		Summary: "Delete a user's secondary e-mail address (administrators)", Access: api.AdminOnly, Status: http.StatusOK},
		func(ctx context.Context, in *UserEmailIDPath) (*emailOutput, error) {
			if _, err := s.userByID(ctx, in.ID); err != nil {
				return nil, err
			}
			out, err := s.deleteEmail(ctx, in.ID, in.EmailID)
			if errors.Is(err, errEmailNotFound) {
				return nil, api.NotFound("Email")
			}
			return out, err
		})
}

func (s *Service) listEmails(ctx context.Context, userID int64, p api.PageParams) (*emailsOutput, error) {
	list, total, err := listByUser(ctx, s.db, emails, userID, p, func(e *Email) EmailView { return emailView(e) })
	if err != nil {
		return nil, err
	}
	return &emailsOutput{PageHeaders: api.Paginate(ctx, p, total), Body: list}, nil
}

func validEmail(address string) bool {
	a, err := mail.ParseAddress(address)
	return err == nil && a.Address == address && len(address) <= 255
}

func (s *Service) addEmail(ctx context.Context, userID int64, address string) (*emailOutput, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return nil, ValidationError{"email": {"can't be blank"}}
	}
	if !validEmail(address) {
		return nil, ValidationError{"email": {"is invalid"}}
	}
	e := &Email{UserID: uint64(userID), Email: address, CreatedAt: s.now().UTC()}
	err := s.update(ctx, func(tx *store.Tx) error {
		if emailTaken(tx, address, 0) {
			return ValidationError{"email": {"has already been taken"}}
		}
		return emails.Insert(tx, e)
	})
	if err != nil {
		return nil, conflictAsValidation(err)
	}
	v := emailView(e)
	return &emailOutput{Body: &v}, nil
}

func (s *Service) deleteEmail(ctx context.Context, userID, emailID int64) (*emailOutput, error) {
	row, err := deleteOwnedRow(ctx, s, emails, userID, emailID, errEmailNotFound)
	if err != nil {
		return nil, err
	}
	v := emailView(row)
	return &emailOutput{Body: &v}, nil
}
