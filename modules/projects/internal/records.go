package internal

// The records the service hands out (package project's), and the reads a
// rendering of a project needs beyond its resolution: the names of the
// groups it is shared with, the source of a fork as the caller may see it.

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// record is a resolved project as the contract gives it.
func (s *Service) record(ctx context.Context, r *resolved) project.Project {
	p := r.p
	out := project.Project{Info: s.info(ctx, r), TagList: append([]string{}, p.TagList...), CreatorID: p.CreatorID,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, LastActivityAt: p.LastActivityAt, StarCount: p.StarCount,
		ForksCount: p.ForksCount, ImportStatus: importStatus(p), ImportError: p.ImportError,
		SharedWith: make([]project.Share, 0, len(p.SharedWith))}
	for _, sh := range p.SharedWith {
		out.SharedWith = append(out.SharedWith, shareRecord(p.ID, sh))
	}
	return out
}

// recordOf turns the answer of a command on a project into the contract's.
func (s *Service) recordOf(ctx context.Context) func(*resolved, error) (project.Project, error) {
	return func(r *resolved, err error) (project.Project, error) {
		if err != nil {
			return project.Project{}, err
		}
		return s.record(ctx, r), nil
	}
}

func shareRecord(projectID int64, sh Share) project.Share {
	return project.Share{ProjectID: projectID, GroupID: sh.GroupID, GroupAccess: sh.Access, ExpiresAt: sh.ExpiresAt}
}

// importStatus is the project's import_status: none without an import,
// scheduled until the repository module reports on it.
func importStatus(p *Project) string {
	switch {
	case p.ImportStatus != "":
		return p.ImportStatus
	case p.ImportURL != "":
		return project.ImportScheduled
	}
	return project.ImportNone
}

// sharedGroupNames are the names of the groups p is shared with (a group
// gone meanwhile has none).
func (s *Service) sharedGroupNames(ctx context.Context, p *Project) map[int64]string {
	names := map[int64]string{}
	if len(p.SharedWith) == 0 {
		return names
	}
	_ = s.db.View(ctx, func(tx *store.Tx) error {
		for _, sh := range p.SharedWith {
			if g, err := namespaces.Get(tx, sh.GroupID); err == nil {
				names[sh.GroupID] = g.Name
			}
		}
		return nil
	})
	return names
}

// forkSource is the source of a fork with its namespace when the caller
// may see it (GitLab hides a source the caller cannot read), else nil.
func (s *Service) forkSource(ctx context.Context, p *Project) (*Project, *nsInfo) {
	if p.ForkedFromID == 0 {
		return nil, nil
	}
	pr := auth.FromContext(ctx)
	var src *Project
	var ns *Namespace
	visible := false
	_ = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if src, err = projects.Get(tx, p.ForkedFromID); err != nil {
			return err
		}
		if ns, err = namespaces.Get(tx, src.NamespaceID); err != nil {
			return err
		}
		visible = canSee(pr, src, levelsOf(tx, pr, src, s.now()))
		return nil
	})
	if !visible {
		return nil, nil
	}
	ni, err := s.namespaceInfo(ctx, ns)
	if err != nil {
		return nil, nil
	}
	return src, &ni
}

// withNamespaces completes rows (namespaces read by visibleProjects or a
// list) with their namespaces' paths and names; projects whose owner is
// gone are left out (their clean-up is under way).
func (s *Service) withNamespaces(ctx context.Context, rows []*resolved) ([]*resolved, error) {
	out := make([]*resolved, 0, len(rows))
	for _, r := range rows {
		ni, err := s.namespaceInfo(ctx, r.ni.ns)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.ni = ni
		out = append(out, r)
	}
	return out, nil
}
