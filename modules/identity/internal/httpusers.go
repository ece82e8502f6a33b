package internal

import (
	"context"
	"net/http"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// Parameter structs embedded in inputs must be exported types: Huma cannot
// set an embedded field of an unexported type.

// UserIDPath is the :id of a user.
type UserIDPath struct {
	ID int64 `path:"id" doc:"User id"`
}

type listUsersInput struct {
	api.PageParams
	Active   bool   `query:"active" doc:"Only active users (only true is supported)"`
	Blocked  bool   `query:"blocked" doc:"Only blocked users (only true is supported)"`
	External bool   `query:"external" doc:"Only external users"`
	Search   string `query:"search" doc:"Matches username, name or e-mail"`
	Username string `query:"username" doc:"Exact username"`
}

type listOutput struct {
	api.PageHeaders
	// Users render as public views for normal callers and full views for
	// administrators, so the element type varies.
	Body []any
}

type userOutput struct {
	Body any
}

// UserFields are the profile fields of create and modify (an exported type:
// it is embedded in an input, which Huma can only fill when exported).
type UserFields struct {
	Email          *string `json:"email,omitempty"`
	Username       *string `json:"username,omitempty"`
	Name           *string `json:"name,omitempty"`
	Password       *string `json:"password,omitempty"`
	Skype          *string `json:"skype,omitempty"`
	Linkedin       *string `json:"linkedin,omitempty"`
	Twitter        *string `json:"twitter,omitempty"`
	WebsiteURL     *string `json:"website_url,omitempty"`
	Organization   *string `json:"organization,omitempty"`
	Bio            *string `json:"bio,omitempty"`
	Location       *string `json:"location,omitempty"`
	ProjectsLimit  *int    `json:"projects_limit,omitempty"`
	ExternUID      *string `json:"extern_uid,omitempty"`
	Provider       *string `json:"provider,omitempty"`
	Admin          *bool   `json:"admin,omitempty"`
	CanCreateGroup *bool   `json:"can_create_group,omitempty"`
	External       *bool   `json:"external,omitempty"`
}

// fields are the service's input of f.
func (f *UserFields) fields() user.Fields {
	return user.Fields{
		Email: f.Email, Username: f.Username, Name: f.Name, Password: f.Password,
		Skype: f.Skype, Linkedin: f.Linkedin, Twitter: f.Twitter, WebsiteURL: f.WebsiteURL,
		Organization: f.Organization, Bio: f.Bio, Location: f.Location, ProjectsLimit: f.ProjectsLimit,
		ExternUID: f.ExternUID, Provider: f.Provider, Admin: f.Admin, CanCreateGroup: f.CanCreateGroup,
		External: f.External,
	}
}

type createUserInput struct {
	Body struct {
		Email         string  `json:"email" required:"true"`
		Username      string  `json:"username" required:"true"`
		Name          string  `json:"name" required:"true"`
		Password      *string `json:"password,omitempty"`
		ResetPassword bool    `json:"reset_password,omitempty" doc:"Generate a password the user must change; takes priority over password"`
		Confirm       *bool   `json:"confirm,omitempty" doc:"Mark the e-mail confirmed (default true)"`
		UserFields
	}
}

type updateUserInput struct {
	UserIDPath
	Body UserFields
}

type boolOutput struct {
	Body bool
}

type activitiesInput struct {
	api.PageParams
	From string `query:"from" doc:"YYYY-MM-DD; default six months ago"`
}

type activitiesOutput struct {
	api.PageHeaders
	Body []ActivityView
}

func (h *handlers) registerUsers(a *api.API) {
	readScopes := []string{auth.ScopeAPI, auth.ScopeReadUser}
	api.Register(a, api.Op{ID: "list-users", Method: http.MethodGet, Path: "/users", Tags: []string{"users"},
		Summary: "List users", Access: api.Public, Scopes: readScopes}, h.listUsers)
	api.Register(a, api.Op{ID: "get-user", Method: http.MethodGet, Path: "/users/{id}", Tags: []string{"users"},
		Summary: "A single user", Access: api.Public, Scopes: readScopes}, h.getUser)
	api.Register(a, api.Op{ID: "create-user", Method: http.MethodPost, Path: "/users", Tags: []string{"users"},
		Summary: "Create a user (administrators)", Access: api.AdminOnly}, h.createUser)
	api.Register(a, api.Op{ID: "update-user", Method: http.MethodPut, Path: "/users/{id}", Tags: []string{"users"},
		Summary: "Modify a user (administrators)", Access: api.AdminOnly}, h.updateUser)
	api.Register(a, api.Op{ID: "delete-user", Method: http.MethodDelete, Path: "/users/{id}", Tags: []string{"users"},
		Summary: "Delete a user (administrators); 200 even when missing", Access: api.AdminOnly, Status: http.StatusOK}, h.deleteUser)
	api.Register(a, api.Op{ID: "block-user", Method: http.MethodPost, Path: "/users/{id}/block", Tags: []string{"users"},
		Summary: "Block a user (administrators)", Access: api.AdminOnly}, h.blockUser)
	api.Register(a, api.Op{ID: "unblock-user", Method: http.MethodPost, Path: "/users/{id}/unblock", Tags: []string{"users"},
		Summary: "Unblock a user (administrators)", Access: api.AdminOnly}, h.unblockUser)
}

func (h *handlers) listUsers(ctx context.Context, in *listUsersInput) (*listOutput, error) {
	offset, limit := page(in.PageParams)
	list, total, err := h.svc.Accounts(ctx, user.ListOptions{Active: in.Active, Blocked: in.Blocked,
		External: in.External, Search: in.Search, Username: in.Username}, offset, limit)
	if err != nil {
		return nil, err
	}
	admin := auth.FromContext(ctx).IsAdmin()
	base := api.ExternalURLFrom(ctx)
	out := &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: make([]any, 0, len(list))}
	for _, acct := range list {
		if admin {
			v := fullView(base, acct)
			out.Body = append(out.Body, &v)
		} else {
			v := publicView(base, acct)
			out.Body = append(out.Body, &v)
		}
	}
	return out, nil
}

func (h *handlers) getUser(ctx context.Context, in *UserIDPath) (*userOutput, error) {
	acct, err := h.svc.Account(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &userOutput{Body: viewFor(ctx, acct)}, nil
}

func (h *handlers) createUser(ctx context.Context, in *createUserInput) (*userOutput, error) {
	b := &in.Body
	if b.Password == nil && !b.ResetPassword {
		return nil, api.AtLeastOne("password", "reset_password")
	}
	f := b.UserFields.fields()
	f.Email, f.Username, f.Name, f.Password = &b.Email, &b.Username, &b.Name, b.Password
	acct, err := h.svc.CreateAccount(ctx, user.NewAccount{Fields: f, ResetPassword: b.ResetPassword, Confirm: b.Confirm})
	if err != nil {
		return nil, err
	}
	v := fullView(api.ExternalURLFrom(ctx), acct)
	return &userOutput{Body: &v}, nil
}

func (h *handlers) updateUser(ctx context.Context, in *updateUserInput) (*userOutput, error) {
	acct, err := h.svc.UpdateAccount(ctx, in.ID, in.Body.fields())
	if err != nil {
		return nil, err
	}
	v := fullView(api.ExternalURLFrom(ctx), acct)
	return &userOutput{Body: &v}, nil
}

func (h *handlers) deleteUser(ctx context.Context, in *UserIDPath) (*maybeOutput, error) {
	deleted, err := h.svc.DeleteAccount(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if deleted == nil {
		return nothing(), nil
	}
	v := fullView(api.ExternalURLFrom(ctx), *deleted)
	return &maybeOutput{Body: &v}, nil
}

// blockUser and unblockUser answer whether the state changed: blocking a
// blocked user or unblocking an active one is a 201 false, as GitLab's
// state machine answers a transition it cannot make.
func (h *handlers) blockUser(ctx context.Context, in *UserIDPath) (*boolOutput, error) {
	changed, err := h.svc.Block(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &boolOutput{Body: changed}, nil
}

func (h *handlers) unblockUser(ctx context.Context, in *UserIDPath) (*boolOutput, error) {
	changed, err := h.svc.Unblock(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &boolOutput{Body: changed}, nil
}

func (h *handlers) registerActivity(a *api.API) {
	api.Register(a, api.Op{ID: "list-user-activities", Method: http.MethodGet, Path: "/user/activities", Tags: []string{"users"},
		Summary: "Users' last activity dates, oldest first (administrators)", Access: api.AdminOnly}, h.listActivities)
	// GET /users/{id}/events is served by the activity module, which
	// records the events.
}

func (h *handlers) listActivities(ctx context.Context, in *activitiesInput) (*activitiesOutput, error) {
	var since *time.Time
	if in.From != "" {
		t, err := time.Parse("2006-01-02", in.From)
		if err != nil {
			return nil, api.Invalid("from")
		}
		since = &t
	}
	offset, limit := page(in.PageParams)
	days, total, err := h.svc.ActiveDays(ctx, since, offset, limit)
	if err != nil {
		return nil, err
	}
	out := &activitiesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []ActivityView{}}
	for _, d := range days {
		day := api.Date(d.Day)
		out.Body = append(out.Body, ActivityView{Username: d.Username, LastActivityOn: day, LastActivityAt: day})
	}
	return out, nil
}
