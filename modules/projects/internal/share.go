package internal

// Sharing a project with a group: the group's members get the lower of
// their group level and the share's level (levelsOf). Shares live in the
// project record (Project.SharedWith), one per group.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// ShareInput is POST /projects/:id/share.
type ShareInput struct {
	GroupID     int64   `json:"group_id" required:"true" doc:"The group to share with"`
	GroupAccess int     `json:"group_access" required:"true" enum:"10,20,30,40,50" doc:"Access level the group's members get at most"`
	ExpiresAt   *string `json:"expires_at,omitempty" nullable:"true" doc:"YYYY-MM-DD; the share ends when that day begins (UTC)"`
}

type projectShareInput struct {
	ProjectPath
	Body ShareInput
}

// ShareLinkView answers a share. A share is identified by its group within
// the project (DELETE /projects/:id/share/:group_id), so its id is the
// group's id.
type ShareLinkView struct {
	ID          uint64    `json:"id"`
	ProjectID   uint64    `json:"project_id"`
	GroupID     uint64    `json:"group_id"`
	GroupAccess int       `json:"group_access"`
	ExpiresAt   *api.Date `json:"expires_at"`
}

type projectShareOutput struct{ Body *ShareLinkView }

type projectUnshareInput struct {
	ProjectPath
	GroupID int64 `path:"group_id" doc:"The group to stop sharing with"`
}

func (s *Service) registerShare(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "share-project", Method: http.MethodPost, Path: "/projects/{id}/share", Tags: tags,
		Summary: "Share a project with a group (Master and up)", Access: api.SignedIn}, s.share)
	api.Register(a, api.Op{ID: "unshare-project", Method: http.MethodDelete, Path: "/projects/{id}/share/{group_id}", Tags: tags,
		Summary: "Stop sharing a project with a group (Master and up); 204", Access: api.SignedIn}, s.unshare)
}

// shareGroupVisible: members and administrators always; public groups to anyone,
// internal ones to signed-in users who are not external.
func shareGroupVisible(tx *store.Tx, pr *auth.Principal, g *Namespace, now time.Time) bool {
	switch {
	case pr.IsAdmin():
		return true
	case !pr.IsAnonymous() && groupMemberLevel(tx, g.ID, uint64(pr.UserID()), now) >= project.Guest:
		return true
	case g.Visibility == project.Public:
		return true
	case g.Visibility == project.Internal:
		return !pr.IsAnonymous() && !pr.User.External
	}
	return false
}

// share adds a share for a group the caller can see: 404 Group Not Found
// for any other, 409 when the project is already shared with it or belongs
// to it.
func (s *Service) share(ctx context.Context, in *projectShareInput) (*projectShareOutput, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	var expires *time.Time
	if in.Body.ExpiresAt != nil && *in.Body.ExpiresAt != "" {
		t, err := api.ParseTime(*in.Body.ExpiresAt)
		if err != nil {
			return nil, api.Invalid("expires_at")
		}
		// As in GitLab, access ends when the given day begins (UTC).
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		expires = &day
	}
	pr := auth.FromContext(ctx)
	now := s.now()
	sh := Share{GroupID: uint64(in.Body.GroupID), Access: in.Body.GroupAccess, ExpiresAt: expires}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return project.ErrNotFound
		}
		if in.Body.GroupID <= 0 {
			return project.ErrGroupNotFound
		}
		g, err := namespaces.Get(tx, sh.GroupID)
		if err != nil || g.Kind != KindGroup || !shareGroupVisible(tx, pr, g, now) {
			return project.ErrGroupNotFound
		}
		if slices.Contains(groupAndAncestorIDs(tx, p.NamespaceID), g.ID) {
			return api.Conflict(msgOwnGroup)
		}
		for _, old := range p.SharedWith {
			if old.GroupID == g.ID {
				return api.Conflict(msgAlreadyShared)
			}
		}
		p.SharedWith = append(p.SharedWith, sh)
		p.UpdatedAt = now.UTC()
		return projects.Update(tx, p)
	})
	if err != nil {
		return nil, err
	}
	v := &ShareLinkView{ID: sh.GroupID, ProjectID: r.p.ID, GroupID: sh.GroupID, GroupAccess: sh.Access}
	if expires != nil {
		d := api.Date(*expires)
		v.ExpiresAt = &d
	}
	return &projectShareOutput{Body: v}, nil
}

// unshare removes the share with a group: 404 Group Link Not Found when
// there is none.
func (s *Service) unshare(ctx context.Context, in *projectUnshareInput) (*struct{}, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return project.ErrNotFound
		}
		kept := make([]Share, 0, len(p.SharedWith))
		for _, sh := range p.SharedWith {
			if in.GroupID <= 0 || sh.GroupID != uint64(in.GroupID) {
				kept = append(kept, sh)
			}
		}
		if len(kept) == len(p.SharedWith) {
			return api.NotFound("Group Link")
		}
		p.SharedWith = kept
		p.UpdatedAt = s.now().UTC()
		return projects.Update(tx, p)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrNotFound
	}
	return nil, err
}
