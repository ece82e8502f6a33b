package internal

import (
	"context"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Resolve finds a project by id or full path as the caller of ctx sees it;
// a project they may not see is ErrProjectNotFound.
func (s *Service) Resolve(ctx context.Context, ref string) (project.Info, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return project.Info{}, err
	}
	return s.info(ctx, r), nil
}

// Require is Resolve plus the check of one action, from one resolution:
// ErrProjectNotFound when the caller cannot see the project, ErrForbidden
// when they can but may not do a.
func (s *Service) Require(ctx context.Context, ref string, a project.Action) (project.Info, error) {
	r, err := s.require(ctx, ref, a)
	if err != nil {
		return project.Info{}, err
	}
	return s.info(ctx, r), nil
}

// ResolveID is Resolve for a project id; ids that cannot exist are 404.
func (s *Service) ResolveID(ctx context.Context, projectID int64) (project.Info, error) {
	return s.Resolve(ctx, idRef(projectID))
}

// RequireID is Require for a project id.
func (s *Service) RequireID(ctx context.Context, projectID int64, a project.Action) (project.Info, error) {
	return s.Require(ctx, idRef(projectID), a)
}

// idRef is a project id as the :id that resolve parses; a non-positive id
// becomes a path no project has, so it is 404 like any unknown project.
func idRef(projectID int64) string {
	if projectID <= 0 {
		return ""
	}
	return strconv.FormatInt(projectID, 10)
}

func (s *Service) info(ctx context.Context, r *resolved) project.Info {
	web, httpRepo, sshRepo := s.urls(ctx, r.ni.path, r.p.Path)
	return project.Info{
		ID: r.p.ID, NamespaceID: r.p.NamespaceID, Name: r.p.Name, Path: r.p.Path,
		PathWithNamespace: r.ni.path + "/" + r.p.Path, NameWithNamespace: r.ni.name + " / " + r.p.Name,
		WebURL: web, HTTPURLToRepo: httpRepo, SSHURLToRepo: sshRepo,
		Visibility: r.p.Visibility, Archived: r.p.Archived, DefaultBranch: r.p.DefaultBranch,
		Features: r.p.Features, Level: effectiveLevel(auth.FromContext(ctx), r.p, r.l), MemberLevel: r.l.max(),
		ForkedFromID: r.p.ForkedFromID, Description: deref(r.p.Description),
		OnlyAllowMergeIfAllDiscussionsAreResolved: r.p.OnlyAllowMergeIfAllDiscussionsAreResolved,
		OnlyAllowMergeIfPipelineSucceeds:          r.p.OnlyAllowMergeIfPipelineSucceeds,
		GroupIDs:                                  r.ni.groupIDs(), StarCount: r.p.StarCount, ForksCount: r.p.ForksCount,
	}
}

// Can reports whether the caller may do a on the project (false, with the
// ErrProjectNotFound, when they cannot see it at all).
func (s *Service) Can(ctx context.Context, ref string, a project.Action) (bool, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return false, err
	}
	return allowed(auth.FromContext(ctx), r.p, r.l, a), nil
}
