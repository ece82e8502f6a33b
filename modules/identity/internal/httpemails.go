package internal

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

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

func (h *handlers) registerEmails(a *api.API) {
	tags := []string{"emails"}
	api.Register(a, api.Op{ID: "list-own-emails", Method: http.MethodGet, Path: "/user/emails", Tags: tags,
		Summary: "The caller's secondary e-mail addresses", Access: api.SignedIn}, func(ctx context.Context, in *keyListInput) (*emailsOutput, error) {
		return h.listEmails(ctx, auth.FromContext(ctx).UserID(), in.PageParams)
	})
	api.Register(a, api.Op{ID: "list-user-emails", Method: http.MethodGet, Path: "/users/{id}/emails", Tags: tags,
		Summary: "A user's secondary e-mail addresses (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userEmailListInput) (*emailsOutput, error) {
		return h.listEmails(ctx, in.ID, in.PageParams)
	})
	api.Register(a, api.Op{ID: "get-own-email", Method: http.MethodGet, Path: "/user/emails/{email_id}", Tags: tags,
		Summary: "One of the caller's e-mail addresses", Access: api.SignedIn}, func(ctx context.Context, in *EmailIDPath) (*emailOutput, error) {
		e, err := h.svc.SecondaryEmail(ctx, auth.FromContext(ctx).UserID(), in.EmailID)
		if err != nil {
			return nil, err
		}
		v := emailView(e)
		return &emailOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "add-own-email", Method: http.MethodPost, Path: "/user/emails", Tags: tags,
		Summary: "Add a secondary e-mail address", Access: api.SignedIn}, func(ctx context.Context, in *emailInput) (*emailOutput, error) {
		return h.addEmail(ctx, auth.FromContext(ctx).UserID(), in.Body.Email)
	})
	api.Register(a, api.Op{ID: "add-user-email", Method: http.MethodPost, Path: "/users/{id}/emails", Tags: tags,
		Summary: "Add a secondary e-mail address for a user (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userEmailInput) (*emailOutput, error) {
		return h.addEmail(ctx, in.ID, in.Body.Email)
	})
	api.Register(a, api.Op{ID: "delete-own-email", Method: http.MethodDelete, Path: "/user/emails/{email_id}", Tags: tags,
		Summary: "Delete a secondary e-mail address; 200 even when missing", Access: api.SignedIn, Status: http.StatusOK},
		func(ctx context.Context, in *EmailIDPath) (*maybeOutput, error) {
			e, err := h.svc.DeleteEmail(ctx, auth.FromContext(ctx).UserID(), in.EmailID)
			if errors.Is(err, user.ErrEmailNotFound) {
				return nothing(), nil // idempotent
			}
			if err != nil {
				return nil, err
			}
			v := emailView(e)
			return &maybeOutput{Body: &v}, nil
		})
	api.Register(a, api.Op{ID: "delete-user-email", Method: http.MethodDelete, Path: "/users/{id}/emails/{email_id}", Tags: tags,
		Summary: "Delete a user's secondary e-mail address (administrators)", Access: api.AdminOnly, Status: http.StatusOK},
		func(ctx context.Context, in *UserEmailIDPath) (*emailOutput, error) {
			e, err := h.svc.DeleteEmail(ctx, in.ID, in.EmailID)
			if err != nil {
				return nil, err
			}
			v := emailView(e)
			return &emailOutput{Body: &v}, nil
		})
}

func (h *handlers) listEmails(ctx context.Context, userID int64, p api.PageParams) (*emailsOutput, error) {
	offset, limit := page(p)
	list, total, err := h.svc.SecondaryEmails(ctx, userID, offset, limit)
	if err != nil {
		return nil, err
	}
	out := &emailsOutput{PageHeaders: api.Paginate(ctx, p, total), Body: make([]EmailView, 0, len(list))}
	for _, e := range list {
		out.Body = append(out.Body, emailView(e))
	}
	return out, nil
}

func (h *handlers) addEmail(ctx context.Context, userID int64, address string) (*emailOutput, error) {
	e, err := h.svc.AddEmail(ctx, userID, address)
	if err != nil {
		return nil, err
	}
	v := emailView(e)
	return &emailOutput{Body: &v}, nil
}
