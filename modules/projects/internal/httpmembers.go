package internal

// The HTTP adapter of group and project members (members.go and
// membersall.go say who may do what).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// MemberView is a member: the user's public fields, the level and the
// expiry date.
type MemberView struct {
	identity.BasicUser
	AccessLevel int       `json:"access_level"`
	ExpiresAt   *api.Date `json:"expires_at"`
}

type memberListInput struct {
	ID string `path:"id" doc:"Group or project id, or URL-encoded path"`
	api.PageParams
	Query string `query:"query" doc:"Only members whose username or name contains this"`
}

type memberListOutput struct {
	api.PageHeaders
	Body []MemberView
}

// MemberPath is a member of a group or project.
type MemberPath struct {
	ID     string `path:"id" doc:"Group or project id, or URL-encoded path"`
	UserID int64  `path:"user_id"`
}

type memberOutput struct{ Body *MemberView }

// MemberInput is the body of add (user_id and access_level required) and
// edit (access_level required).
type MemberInput struct {
	UserID      *int64  `json:"user_id,omitempty"`
	AccessLevel *int    `json:"access_level,omitempty" doc:"10 Guest, 20 Reporter, 30 Developer, 40 Master, 50 Owner (groups only)"`
	ExpiresAt   *string `json:"expires_at,omitempty" doc:"YYYY-MM-DD, in the future; the membership ends at the start of that day (UTC). Empty on edit: no expiry"`
}

type memberAddInput struct {
	ID   string `path:"id" doc:"Group or project id, or URL-encoded path"`
	Body MemberInput
}

type memberEditInput struct {
	MemberPath
	Body MemberInput
}

// fields are the service's input.
func (b *MemberInput) fields() project.MemberFields {
	return project.MemberFields{UserID: b.UserID, AccessLevel: b.AccessLevel, ExpiresAt: b.ExpiresAt}
}

func (h handlers) registerMembers(a *api.API) {
	for _, src := range []struct{ kind, base, tag string }{
		{KindGroup, "/groups/{id}", "groups"},
		{sourceProject, "/projects/{id}", "projects"},
	} {
		kind, tags := src.kind, []string{src.tag}
		manager := "Owner"
		if kind == sourceProject {
			manager = "Master"
		}
		api.Register(a, api.Op{ID: "list-" + kind + "-members", Method: http.MethodGet, Path: src.base + "/members", Tags: tags,
			Summary: "Members of a " + kind, Access: api.Public},
			func(ctx context.Context, in *memberListInput) (*memberListOutput, error) {
				rows, total, err := h.listMembers(ctx, kind, in.ID, in.Query, in.Offset(), in.Limit())
				return h.memberList(ctx, in, rows, total, err)
			})
		api.Register(a, api.Op{ID: "get-" + kind + "-member", Method: http.MethodGet, Path: src.base + "/members/{user_id}", Tags: tags,
			Summary: "A member of a " + kind, Access: api.Public},
			func(ctx context.Context, in *MemberPath) (*memberOutput, error) {
				return h.member(ctx)(h.getMember(ctx, kind, in.ID, in.UserID))
			})
		api.Register(a, api.Op{ID: "add-" + kind + "-member", Method: http.MethodPost, Path: src.base + "/members", Tags: tags,
			Summary: "Add a member to a " + kind + " (" + manager + " or administrator)", Access: api.SignedIn},
			func(ctx context.Context, in *memberAddInput) (*memberOutput, error) {
				return h.member(ctx)(h.addMember(ctx, kind, in.ID, in.Body.fields()))
			})
		api.Register(a, api.Op{ID: "edit-" + kind + "-member", Method: http.MethodPut, Path: src.base + "/members/{user_id}", Tags: tags,
			Summary: "Change a member's level or expiry (" + manager + " or administrator)", Access: api.SignedIn},
			func(ctx context.Context, in *memberEditInput) (*memberOutput, error) {
				return h.member(ctx)(h.editMember(ctx, kind, in.ID, in.UserID, in.Body.fields()))
			})
		api.Register(a, api.Op{ID: "remove-" + kind + "-member", Method: http.MethodDelete, Path: src.base + "/members/{user_id}", Tags: tags,
			Summary: "Remove a member (" + manager + " or administrator), or leave", Access: api.SignedIn},
			func(ctx context.Context, in *MemberPath) (*struct{}, error) {
				return nil, h.removeMember(ctx, kind, in.ID, in.UserID)
			})
	}
}

// registerMembersAll adds GET /projects/:id/members/all and
// /groups/:id/members/all (and .../all/:user_id): everyone with a
// membership-given level, not only the explicit members.
func (h handlers) registerMembersAll(a *api.API) {
	for _, src := range []struct{ kind, base, tag string }{
		{KindGroup, "/groups/{id}", "groups"},
		{sourceProject, "/projects/{id}", "projects"},
	} {
		kind, tags := src.kind, []string{src.tag}
		api.Register(a, api.Op{ID: "list-all-" + kind + "-members", Method: http.MethodGet, Path: src.base + "/members/all", Tags: tags,
			Summary: "Members of a " + kind + ", inherited ones included", Access: api.Public},
			func(ctx context.Context, in *memberListInput) (*memberListOutput, error) {
				rows, total, err := h.listAllMembers(ctx, kind, in.ID, in.Query, in.Offset(), in.Limit())
				return h.memberList(ctx, in, rows, total, err)
			})
		api.Register(a, api.Op{ID: "get-all-" + kind + "-member", Method: http.MethodGet, Path: src.base + "/members/all/{user_id}", Tags: tags,
			Summary: "A member of a " + kind + ", inherited ones included", Access: api.Public},
			func(ctx context.Context, in *MemberPath) (*memberOutput, error) {
				return h.member(ctx)(h.getAllMember(ctx, kind, in.ID, in.UserID))
			})
	}
}

// memberList answers a page of members.
func (h handlers) memberList(ctx context.Context, in *memberListInput, rows []memberRow, total int, err error) (*memberListOutput, error) {
	if err != nil {
		return nil, err
	}
	views := make([]MemberView, 0, len(rows))
	for _, r := range rows {
		views = append(views, memberView(ctx, r))
	}
	return &memberListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

// member answers one member.
func (h handlers) member(ctx context.Context) func(memberRow, error) (*memberOutput, error) {
	return func(r memberRow, err error) (*memberOutput, error) {
		if err != nil {
			return nil, err
		}
		v := memberView(ctx, r)
		return &memberOutput{Body: &v}, nil
	}
}

func memberView(ctx context.Context, r memberRow) MemberView {
	v := MemberView{BasicUser: identity.NewBasicUser(api.ExternalURLFrom(ctx), r.u), AccessLevel: r.m.AccessLevel}
	if r.m.ExpiresAt != nil {
		v.ExpiresAt = api.DatePtr(*r.m.ExpiresAt)
	}
	return v
}
