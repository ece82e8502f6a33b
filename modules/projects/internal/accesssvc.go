package internal

import (
	"context"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
)

// ProjectInfo is what other modules may know of a project.
type ProjectInfo struct {
	ID                int64
	NamespaceID       int64
	Name              string
	Path              string
	PathWithNamespace string
	NameWithNamespace string
	WebURL            string
	Visibility        string
	Archived          bool
	DefaultBranch     string
	Features          Features
	// Level is the caller's effective access level (Guest for readers of a
	// public or internal project, Owner for administrators).
	Level int
	// MemberLevel is the caller's level from membership alone (the project,
	// its group, a group it is shared with, the personal namespace's owner):
	// 0 for non-members, administrators included. Level cannot tell a Guest
	// member from a reader of a public project; GitLab's "team member" rules
	// (private snippets are shown to every member) need that difference.
	MemberLevel int
	// ForkedFromID is the project this one was forked from (0: none), for
	// merge requests from a fork into its upstream.
	ForkedFromID int64
	// Description is the project's description ("" when it has none), for
	// the project object of hook payloads.
	Description string
	// OnlyAllowMergeIfAllDiscussionsAreResolved: merge requests merge only
	// when their threads are resolved (the merge requests module asks).
	OnlyAllowMergeIfAllDiscussionsAreResolved bool
	// GroupIDs are the group owning the project and its ancestors, nearest
	// first (empty in a personal namespace): what a project inherits from
	// groups (labels, milestones, CI variables) comes from these.
	GroupIDs []int64
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Resolve finds a project by id or full path as the caller of ctx sees it;
// a project they may not see is ErrProjectNotFound.
func (s *Service) Resolve(ctx context.Context, ref string) (ProjectInfo, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return ProjectInfo{}, err
	}
	return s.info(ctx, r), nil
}

// Require is Resolve plus the check of one action, from one resolution:
// ErrProjectNotFound when the caller cannot see the project, ErrForbidden
// when they can but may not do a.
func (s *Service) Require(ctx context.Context, ref string, a Action) (ProjectInfo, error) {
	r, err := s.require(ctx, ref, a)
	if err != nil {
		return ProjectInfo{}, err
	}
	return s.info(ctx, r), nil
}

// ResolveID is Resolve for a project id; ids that cannot exist are 404.
func (s *Service) ResolveID(ctx context.Context, projectID int64) (ProjectInfo, error) {
	return s.Resolve(ctx, idRef(projectID))
}

// RequireID is Require for a project id.
func (s *Service) RequireID(ctx context.Context, projectID int64, a Action) (ProjectInfo, error) {
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

func (s *Service) info(ctx context.Context, r *resolved) ProjectInfo {
	web, _, _ := s.urls(ctx, r.ni.path, r.p.Path)
	return ProjectInfo{
		ID: int64(r.p.ID), NamespaceID: int64(r.p.NamespaceID), Name: r.p.Name, Path: r.p.Path,
		PathWithNamespace: r.ni.path + "/" + r.p.Path, NameWithNamespace: r.ni.name + " / " + r.p.Name,
		WebURL: web, Visibility: r.p.Visibility, Archived: r.p.Archived, DefaultBranch: r.p.DefaultBranch,
		Features: r.p.Features, Level: effectiveLevel(auth.FromContext(ctx), r.p, r.l), MemberLevel: r.l.max(),
		ForkedFromID: int64(r.p.ForkedFromID), Description: deref(r.p.Description),
		OnlyAllowMergeIfAllDiscussionsAreResolved: r.p.OnlyAllowMergeIfAllDiscussionsAreResolved,
		GroupIDs: r.ni.groupIDs(),
	}
}

// Can reports whether the caller may do a on the project (false, with the
// ErrProjectNotFound, when they cannot see it at all).
func (s *Service) Can(ctx context.Context, ref string, a Action) (bool, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return false, err
	}
	return allowed(auth.FromContext(ctx), r.p, r.l, a), nil
}
