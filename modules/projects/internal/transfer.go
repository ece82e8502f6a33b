package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// PUT /projects/:id/transfer moves a project to another namespace. The
// repository is stored by project id (repository module), as are every
// other module's records, so a transfer is this one record's namespace
// and nothing moves on disk: the project's path_with_namespace, web_url
// and clone URLs follow from the new namespace at once. The old path is
// not redirected.
//
// Who: the project's Owner (or an administrator), into a namespace they
// may create projects in (their own, a group where they are Master or
// more), the rule of fork; any other namespace is 404 Namespace Not
// Found. The owner of a personal namespace the project leaves keeps
// Master on it as a project member (GitLab keeps the creator's membership
// row; Fennec's owner had none, the namespace gave them Owner).
//
// GITLAB-FACTS: a refused transfer is 400 "Failed to transfer project
// <errors>", the errors printed as a Ruby hash: moving to the namespace it
// is in, or to one that has a project of that name or path.

// transferError is GitLab's refusal of a transfer its service refused
// (project.ErrTransferRefused).
func transferError(msg string) error { return &project.TransferError{Reason: msg} }

// transfer moves the project to namespace (an id or a path) and returns it
// as the caller now sees it.
func (s *Service) transfer(ctx context.Context, projectRef, namespace string) (*resolved, error) {
	ref := strings.TrimSpace(namespace)
	if ref == "" {
		return nil, project.Params(project.ErrMissing, "namespace")
	}
	r, err := s.require(ctx, projectRef, project.RemoveProject)
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	target, err := s.forkTarget(ctx, &project.ForkFields{Namespace: &ref})
	if err != nil {
		return nil, err
	}
	if target.ownerID != 0 && target.ownerID != pr.UserID() && !pr.IsAdmin() {
		return nil, project.ErrNamespaceNotFound
	}
	now := s.now().UTC()
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if errors.Is(err, store.ErrNotFound) {
			return project.ErrNotFound
		}
		if err != nil {
			return err
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
		if ns.ID == p.NamespaceID {
			return transferError("Please select a new namespace for your project.")
		}
		_, nameTaken := projects.GetBy(tx, "name", store.IDString(ns.ID)+"/"+store.Fold(p.Name))
		_, pathTaken := projects.GetBy(tx, "path", projectPathKey(ns.ID, p.Path))
		if nameTaken == nil || pathTaken == nil || subgroupAt(tx, ns.ID, p.Path) {
			return transferError("Project with same name or path in target namespace already exists")
		}
		old, err := namespaces.Get(tx, p.NamespaceID)
		if err != nil {
			return err
		}
		if old.Kind == KindUser {
			if err := s.keepFormerOwner(tx, p, old.OwnerID, pr.UserID(), now); err != nil {
				return err
			}
		}
		p.NamespaceID = ns.ID
		p.UpdatedAt = now
		if err := projects.Update(tx, p); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectUpdated, ProjectID: p.ID, UserID: pr.UserID()})
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return nil, transferError("Project with same name or path in target namespace already exists")
	}
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, store.IDString(r.p.ID))
}

// TransferProject moves a project to another namespace (project.Service).
func (s *Service) TransferProject(ctx context.Context, ref, namespace string) (project.Project, error) {
	return s.recordOf(ctx)(s.transfer(ctx, ref, namespace))
}

// keepFormerOwner makes the owner of the personal namespace a project
// leaves a Master of it, unless a membership gives them as much already.
func (s *Service) keepFormerOwner(tx *store.Tx, p *Project, owner int64, author int64, now time.Time) error {
	key := sourceKey(sourceProject, p.ID) + "/" + store.IDString(owner)
	m, err := members.GetBy(tx, "membership", key)
	switch {
	case err == nil && !expired(m, now):
		if m.AccessLevel >= project.Master {
			return nil
		}
		m.AccessLevel, m.ExpiresAt = project.Master, nil
		return members.Update(tx, m) // a member already: no one joined
	case err == nil:
		// An expired membership is replaced, as adding a member does.
		m.AccessLevel, m.ExpiresAt, m.CreatedAt = project.Master, nil, now
		if err := members.Update(tx, m); err != nil {
			return err
		}
	case errors.Is(err, store.ErrNotFound):
		m = &Member{SourceKind: sourceProject, SourceID: p.ID, UserID: owner, AccessLevel: project.Master, CreatedAt: now}
		if err := members.Insert(tx, m); err != nil {
			return err
		}
	default:
		return err
	}
	return s.bus.Publish(tx, event.MemberEvent{Action: event.MemberJoined, ProjectID: p.ID, UserID: owner, AuthorID: author})
}
