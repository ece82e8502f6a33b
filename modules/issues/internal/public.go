package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// groupsOf are the groups whose labels a project sees
// (ProjectInfo.GroupIDs), read as the server: the callers (merge requests)
// have asked the caller's rights already.
func (s *Service) groupsOf(ctx context.Context, projectID int64) ([]int64, error) {
	info, err := s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), projectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	return info.GroupIDs, err
}

// Ensure implements target.Labels: the project's labels, or its groups'.
func (s *Service) Ensure(ctx context.Context, projectID int64, names []string) ([]int64, error) {
	groups, err := s.groupsOf(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []int64
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		ids, err := s.ensureLabels(tx, projectID, groups, names)
		out = make([]int64, len(ids))
		for n, id := range ids {
			out[n] = id
		}
		return err
	})
	return out, err
}

// Names implements target.Labels.
func (s *Service) Names(ctx context.Context, ids []int64) ([]string, error) {
	var out []string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		u := make([]int64, len(ids))
		for n, id := range ids {
			u[n] = id
		}
		var err error
		out, err = labelNames(tx, u)
		return err
	})
	return out, err
}

// Colors implements target.Labels.
func (s *Service) Colors(ctx context.Context, ids []int64) ([]target.LabelColor, error) {
	out := make([]target.LabelColor, 0, len(ids))
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			l, err := labels.Get(tx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, target.LabelColor{ID: id, Name: l.Name, Color: l.Color})
		}
		return nil
	})
	return out, err
}

// Find implements target.Labels: the project's labels and its groups'.
func (s *Service) Find(ctx context.Context, projectID int64, names []string) ([]int64, error) {
	groups, err := s.groupsOf(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := []int64{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		for _, n := range names {
			ids, err := labelsNamed(tx, projectID, groups, n)
			if err != nil {
				return err
			}
			for _, id := range ids {
				out = append(out, id)
			}
		}
		return nil
	})
	return out, err
}

// Available implements target.Labels: the project's labels, then its
// groups' (nearest first), limit at most, each owner's in id order.
func (s *Service) Available(ctx context.Context, projectID int64, limit int) ([]target.LabelColor, error) {
	groups, err := s.groupsOf(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []target.LabelColor
	err = s.db.View(ctx, func(tx *store.Tx) error {
		owners := [][2]string{{"project", store.IDString(projectID)}}
		for _, g := range groups {
			owners = append(owners, [2]string{"group", store.IDString(g)})
		}
		for _, o := range owners {
			ids, err := labels.FirstIDsBy(tx, o[0], o[1], limit-len(out))
			if err != nil {
				return err
			}
			for _, id := range ids {
				l, err := labels.Get(tx, id)
				if err != nil {
					return err
				}
				out = append(out, target.LabelColor{ID: id, Name: l.Name, Color: l.Color})
			}
			if len(out) >= limit {
				break
			}
		}
		return nil
	})
	return out, err
}

// openMilestones is target.Milestones' Open (Seams): the active
// milestones of the project, then of its groups (nearest first), limit at
// most. Closed ones are read past, up to limit of them per owner.
func (s *Service) openMilestones(ctx context.Context, projectID int64, limit int) ([]issue.Milestone, error) {
	groups, err := s.groupsOf(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []issue.Milestone
	err = s.db.View(ctx, func(tx *store.Tx) error {
		owners := [][2]string{{"project", store.IDString(projectID)}}
		for _, g := range groups {
			owners = append(owners, [2]string{"group", store.IDString(g)})
		}
		for _, o := range owners {
			ids, err := milestones.FirstIDsBy(tx, o[0], o[1], limit)
			if err != nil {
				return err
			}
			for _, id := range ids {
				m, err := milestones.Get(tx, id)
				if err != nil {
					return err
				}
				if m.State == "active" && len(out) < limit {
					out = append(out, milestoneRecord(m))
				}
			}
		}
		return nil
	})
	return out, err
}

// milestoneByID is target.Milestones' Milestone (Seams).
func (s *Service) milestoneByID(ctx context.Context, projectID, id int64) (issue.Milestone, error) {
	var out issue.Milestone
	err := s.db.View(ctx, func(tx *store.Tx) error {
		m, err := milestoneIn(tx, projectID, id)
		if err != nil {
			return err
		}
		out = milestoneRecord(m)
		return nil
	})
	return out, err
}

// assignable is target.Milestones' Assignable (Seams): the project's
// milestone, or one of the groups the project is in (as an issue takes
// them, milestoneOf).
func (s *Service) assignable(ctx context.Context, projectID, id int64) (issue.Milestone, error) {
	groups, err := s.groupsOf(ctx, projectID)
	if err != nil {
		return issue.Milestone{}, err
	}
	var out issue.Milestone
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if _, ok := milestoneOf(tx, projects.ProjectInfo{ID: projectID, GroupIDs: groups}, id); !ok || id <= 0 {
			return ErrMilestoneNotFound
		}
		m, err := milestones.Get(tx, id)
		if err != nil {
			return err
		}
		out = milestoneRecord(m)
		return nil
	})
	return out, err
}

// milestoneByTitle is target.Milestones' ByTitle (Seams).
func (s *Service) milestoneByTitle(ctx context.Context, projectID int64, title string) (issue.Milestone, error) {
	var out issue.Milestone
	err := s.db.View(ctx, func(tx *store.Tx) error {
		m, err := milestones.GetBy(tx, "title", store.IDString(projectID)+"/"+title)
		if errors.Is(err, store.ErrNotFound) {
			return ErrMilestoneNotFound
		}
		if err != nil {
			return err
		}
		out = milestoneRecord(m)
		return nil
	})
	return out, err
}

// OpenIssuesCount implements projects.OpenIssuesCounter: the project's
// open (opened or reopened) issues, confidential ones included, read from
// the per-project counter every create, update, close, reopen and delete
// keeps in its own transaction (store.go), so it is one key read.
func (s *Service) OpenIssuesCount(ctx context.Context, projectID int64) (int, error) {
	if projectID <= 0 {
		return 0, nil
	}
	var n int
	err := s.db.View(ctx, func(tx *store.Tx) error {
		n = getCount(tx, projectID, countOpen)
		return nil
	})
	return n, err
}
