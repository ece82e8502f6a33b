package internal

// Forks: a copy of a project's record in another namespace, linked to its
// source by forked_from_id. The git data is copied later by the repository
// module, on the "forked" ProjectEvent published in the same transaction.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// forkTarget is the namespace a fork goes to, found before the write
// transaction (user look-ups must not run inside it): a group's namespace
// id, or the owner of a personal namespace that may not exist yet.
type forkTarget struct {
	groupID int64
	ownerID int64
}

func (s *Service) forkTarget(ctx context.Context, in *project.ForkFields) (forkTarget, error) {
	pr := auth.FromContext(ctx)
	var ref string
	switch {
	case in.NamespaceID != nil && *in.NamespaceID > 0:
		ref = fmt.Sprint(*in.NamespaceID)
	case in.NamespacePath != nil && strings.TrimSpace(*in.NamespacePath) != "":
		ref = strings.TrimSpace(*in.NamespacePath)
	case in.Namespace != nil && strings.TrimSpace(*in.Namespace) != "":
		ref = strings.TrimSpace(*in.Namespace)
	default:
		return forkTarget{ownerID: pr.UserID()}, nil
	}
	var t forkTarget
	err := s.db.View(ctx, func(tx *store.Tx) error {
		// An id first, then a path (GitLab's order: a group may be named "42").
		if id, _ := parseRef(ref); id > 0 && in.NamespacePath == nil {
			if ns, err := namespaces.Get(tx, id); err == nil {
				t = targetOf(ns)
				return nil
			}
		}
		if in.NamespaceID != nil && *in.NamespaceID > 0 {
			return project.ErrNamespaceNotFound
		}
		// A group's full path (a subgroup's "team/backend" too); a single
		// segment may still be a username, tried below.
		if ns, err := findGroupByPath(tx, ref); err == nil {
			t = targetOf(ns)
		}
		return nil
	})
	if err != nil || t != (forkTarget{}) {
		return t, err
	}
	u, err := s.users.UserByUsername(ctx, ref)
	if errors.Is(err, identity.ErrUserNotFound) {
		return t, project.ErrNamespaceNotFound
	}
	if err != nil {
		return t, err
	}
	return forkTarget{ownerID: u.ID}, nil
}

func targetOf(ns *Namespace) forkTarget {
	if ns.Kind == KindGroup {
		return forkTarget{groupID: ns.ID}
	}
	return forkTarget{ownerID: ns.OwnerID}
}

// fork copies the source's name, path, description, visibility, default
// branch, tags and switches; the fork starts unarchived, unstarred and
// unshared, with its own runners token. The caller needs ReadCode on the
// source and must be able to create projects in the target namespace (its
// owner, Master of the group, or an administrator); any other target is
// 404 Namespace Not Found. A name or path already taken there is
// project.ErrTaken (409 with the field errors, as GitLab answers).
func (s *Service) fork(ctx context.Context, ref string, in project.ForkFields) (*resolved, error) {
	src, err := s.require(ctx, ref, project.ReadCode)
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	if pr.IsAnonymous() {
		return nil, project.ErrForbidden // a fork has an owner
	}
	target, err := s.forkTarget(ctx, &in)
	if err != nil {
		return nil, err
	}
	if target.ownerID != 0 && target.ownerID != pr.UserID() && !pr.IsAdmin() {
		return nil, project.ErrNamespaceNotFound
	}
	limit := -1
	if target.ownerID != 0 && !pr.IsAdmin() {
		owner, err := s.users.UserByID(ctx, target.ownerID)
		if err != nil {
			return nil, project.ErrNamespaceNotFound
		}
		limit = owner.ProjectsLimit
	}
	name, path := src.p.Name, src.p.Path
	v := project.FieldErrors{}
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
		validateName(v, name)
	}
	if in.Path != nil {
		path = strings.TrimSpace(*in.Path)
		validatePath(v, "path", path)
	}
	if len(v) > 0 {
		return nil, v
	}

	now := s.now().UTC()
	f := &Project{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, src.p.ID)
		if err != nil {
			return project.ErrNotFound
		}
		var ns *Namespace
		if target.groupID != 0 {
			if ns, err = namespaces.Get(tx, target.groupID); err != nil {
				return project.ErrNamespaceNotFound
			}
			if !pr.IsAdmin() && groupMemberLevel(tx, ns.ID, pr.UserID(), now) < project.Master {
				return project.ErrNamespaceNotFound
			}
		} else if ns, err = userNamespace(tx, target.ownerID, now); err != nil {
			return err
		}
		if limit >= 0 {
			ids, err := projects.IDsBy(tx, "namespace", store.IDString(ns.ID))
			if err != nil {
				return err
			}
			if len(ids) >= limit {
				return project.FieldErrors{"limit_reached": {fmt.Sprintf("Personal project creation is not allowed. Your project limit is %d projects", limit)}}
			}
		}
		taken := map[string][]string{}
		if _, err := projects.GetBy(tx, "name", store.IDString(ns.ID)+"/"+store.Fold(name)); err == nil {
			taken["name"] = []string{"has already been taken"}
		}
		if _, err := projects.GetBy(tx, "path", projectPathKey(ns.ID, path)); err == nil || subgroupAt(tx, ns.ID, path) {
			taken["path"] = []string{"has already been taken"}
		}
		if len(taken) > 0 {
			return &project.TakenError{Fields: taken}
		}
		*f = Project{
			NamespaceID: ns.ID, Name: name, Path: path, Description: p.Description, DefaultBranch: p.DefaultBranch,
			Visibility: p.Visibility, CreatorID: pr.UserID(), CreatedAt: now, UpdatedAt: now, LastActivityAt: now,
			TagList: append([]string{}, p.TagList...), ForkedFromID: p.ID, RunnersToken: newToken(),
			SharedWith: []Share{}, Features: p.Features,
		}
		if err := projects.Insert(tx, f); err != nil {
			return err
		}
		p.ForksCount++
		if err := projects.Update(tx, p); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectForked, ProjectID: f.ID, UserID: pr.UserID(), ForkedFromID: p.ID})
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return nil, &project.TakenError{Fields: map[string][]string{conflict.Index: {"has already been taken"}}}
	}
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, store.IDString(f.ID))
}

// ForkProject forks a project (project.Service).
func (s *Service) ForkProject(ctx context.Context, ref string, in project.ForkFields) (project.Project, error) {
	return s.recordOf(ctx)(s.fork(ctx, ref, in))
}
