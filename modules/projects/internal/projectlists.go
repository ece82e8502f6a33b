package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Two project lists of later GitLab versions, cut from the same cloth as
// GET /projects: GET /projects/:id/forks (the direct forks of a project)
// and GET /users/:user_id/projects (the projects of a user's personal
// namespace). Each takes GET /projects' filters and orders and shows only
// what the caller may see.

// listForks is a page of the direct forks of the project ref.
func (s *Service) listForks(ctx context.Context, ref string, in *listFilter) ([]*resolved, int, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	return s.listAmong(ctx, in, func(tx *store.Tx) ([]int64, error) {
		return projects.IDsBy(tx, "forked_from", store.IDString(r.p.ID))
	})
}

// listUserProjects is a page of the projects of a user's personal
// namespace (user: an id or a username): an unknown user is
// project.ErrUserNotFound (404 User Not Found, as GitLab); a user without
// a namespace yet has no projects.
func (s *Service) listUserProjects(ctx context.Context, user string, in *listFilter) ([]*resolved, int, error) {
	var u identity.UserInfo
	var err error
	if id, name := parseRef(user); id > 0 {
		u, err = s.users.UserByID(ctx, id)
	} else {
		u, err = s.users.UserByUsername(ctx, name)
	}
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, 0, project.ErrUserNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	return s.listAmong(ctx, in, s.personalProjects(u.ID))
}

// personalProjects lists the ids of the projects of user's personal
// namespace (none when it has none yet), for listAmong.
func (s *Service) personalProjects(user int64) func(tx *store.Tx) ([]int64, error) {
	return func(tx *store.Tx) ([]int64, error) {
		ns, err := namespaces.GetBy(tx, "owner", store.IDString(user))
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return projects.IDsBy(tx, "namespace", store.IDString(ns.ID))
	}
}

// listAmong lists the projects of ids that the caller may see, with GET
// /projects' filters, order and page.
func (s *Service) listAmong(ctx context.Context, in *listFilter, ids func(tx *store.Tx) ([]int64, error)) ([]*resolved, int, error) {
	pr := auth.FromContext(ctx)
	if (in.Owned || in.Membership || in.Starred) && pr.IsAnonymous() {
		return nil, 0, nil
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
		set := make(map[int64]bool, len(rows))
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
		for _, p := range store.Window(kept, in.Offset, in.Limit) {
			page = append(page, byProject[p])
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	page, err = s.withNamespaces(ctx, page)
	return page, total, err
}
