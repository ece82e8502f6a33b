package internal

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// Two project lists of later GitLab versions, cut from the same cloth as
// GET /projects: GET /projects/:id/forks (the direct forks of a project)
// and GET /users/:user_id/projects (the projects of a user's personal
// namespace). Each takes GET /projects' filters and orders and shows only
// what the caller may see.

type forksInput struct {
	ProjectPath
	ListInput
}

type userProjectsInput struct {
	UserID string `path:"user_id" doc:"User id or username"`
	ListInput
}

func (s *Service) registerProjectLists(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "list-project-forks", Method: http.MethodGet, Path: "/projects/{id}/forks", Tags: tags,
		Summary: "The forks of a project the caller can see", Access: api.Public}, s.listForks)
	api.Register(a, api.Op{ID: "list-user-projects", Method: http.MethodGet, Path: "/users/{user_id}/projects", Tags: tags,
		Summary: "The projects of a user's personal namespace the caller can see", Access: api.Public}, s.listUserProjects)
}

func (s *Service) listForks(ctx context.Context, in *forksInput) (*listOutput, error) {
	r, err := s.resolve(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return s.listAmong(ctx, &in.ListInput, func(tx *store.Tx) ([]uint64, error) {
		return projects.IDsBy(tx, "forked_from", u64(r.p.ID))
	})
}

// listUserProjects: an unknown user is 404 User Not Found (as GitLab); a
// user without a namespace yet has no projects.
func (s *Service) listUserProjects(ctx context.Context, in *userProjectsInput) (*listOutput, error) {
	var u identity.UserInfo
	var err error
	if id, name := api.ParseID(in.UserID); id > 0 {
		u, err = s.users.UserByID(ctx, id)
	} else {
		u, err = s.users.UserByUsername(ctx, name)
	}
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, api.NotFound("User")
	}
	if err != nil {
		return nil, err
	}
	return s.listAmong(ctx, &in.ListInput, func(tx *store.Tx) ([]uint64, error) {
		ns, err := namespaces.GetBy(tx, "owner", u64(uint64(u.ID)))
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return projects.IDsBy(tx, "namespace", u64(ns.ID))
	})
}

// listAmong lists the projects of ids that the caller may see, with GET
// /projects' filters, order and page.
func (s *Service) listAmong(ctx context.Context, in *ListInput, ids func(tx *store.Tx) ([]uint64, error)) (*listOutput, error) {
	pr := auth.FromContext(ctx)
	if (in.Owned || in.Membership || in.Starred) && pr.IsAnonymous() {
		return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, 0), Body: []any{}}, nil
	}
	var page []*resolved
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		list, err := ids(tx)
		if err != nil {
			return err
		}
		rows, err := visibleProjects(tx, pr, list, s.now())
		if err != nil {
			return err
		}
		// owned, membership and starred narrow the set as they narrow
		// GET /projects.
		set := make(map[uint64]bool, len(rows))
		for _, r := range rows {
			set[r.p.ID] = true
		}
		if in.Owned || in.Membership || in.Starred {
			mine, err := memberIDs(tx, pr)
			if err != nil {
				return err
			}
			set = filterOwned(tx, pr, in, set, mine)
		}
		byProject := make(map[*Project]*resolved, len(rows))
		kept := make([]*Project, 0, len(rows))
		for _, r := range rows {
			if set[r.p.ID] && matches(r.p, in) {
				byProject[r.p] = r
				kept = append(kept, r.p)
			}
		}
		sortProjects(kept, in.OrderBy, in.Sort != "asc")
		total = len(kept)
		for _, p := range api.Window(kept, in.PageParams) {
			page = append(page, byProject[p])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	body, err := s.renderProjects(ctx, page, in.Simple)
	if err != nil {
		return nil, err
	}
	return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: body}, nil
}
