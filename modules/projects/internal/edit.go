package internal

// Editing and deleting a project.

import (
	"context"
	"errors"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// updateProject changes what b gives of the project ref (Master; its
// visibility Owner) and returns it as the caller now sees it.
func (s *Service) updateProject(ctx context.Context, ref string, b project.Fields) (*resolved, error) {
	if b == (project.Fields{}) {
		// GitLab's edit takes any one attribute (python-gitlab sends only
		// what changed); name is no more required than the others.
		return nil, project.Params(project.ErrNothingGiven, editableAttributes...)
	}
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return nil, err
	}
	defaultBranch, err := s.defaultBranchChange(ctx, r.p.ID, trimmed(b.DefaultBranch))
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	if b.Visibility != nil {
		if !validVisibility(*b.Visibility) {
			return nil, project.Params(project.ErrInvalidValue, "visibility")
		}
		if *b.Visibility != r.p.Visibility && !allowed(pr, r.p, r.l, project.ChangeVisibility) {
			return nil, project.ErrForbidden
		}
	}
	v := project.FieldErrors{}
	if b.Name != nil {
		validateName(v, strings.TrimSpace(*b.Name))
	}
	if b.Path != nil {
		validatePath(v, "path", strings.TrimSpace(*b.Path))
	}
	if b.ImportURL != nil && *b.ImportURL != "" {
		s.checkImportURL(v, *b.ImportURL)
	}
	if len(v) > 0 {
		return nil, v
	}
	var updated *Project
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return err
		}
		updated = p
		if b.Name != nil {
			p.Name = strings.TrimSpace(*b.Name)
		}
		if b.Path != nil {
			newPath := strings.TrimSpace(*b.Path)
			if store.Fold(newPath) != store.Fold(p.Path) && subgroupAt(tx, p.NamespaceID, newPath) {
				return project.FieldErrors{"path": {"has already been taken"}}
			}
			p.Path = newPath
		}
		if b.Description != nil {
			d := *b.Description
			p.Description = &d
		}
		if defaultBranch != "" {
			p.DefaultBranch = defaultBranch
		}
		if b.Visibility != nil {
			p.Visibility = *b.Visibility
		}
		if b.TagList != nil {
			p.TagList = append([]string{}, (*b.TagList)...)
		}
		if b.ImportURL != nil {
			p.ImportURL = s.box.Seal(*b.ImportURL, purposeImportURL)
		}
		applySwitches(&p.Features, b.Switches)
		p.UpdatedAt = s.now().UTC()
		if err := projects.Update(tx, p); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectUpdated, ProjectID: p.ID, UserID: pr.UserID()})
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return nil, project.FieldErrors{conflict.Index: {"has already been taken"}}
	}
	if err != nil {
		return nil, err
	}
	if updated.Visibility == r.p.Visibility {
		// The caller's levels and the namespace are what they were: render
		// the row as written instead of reading it all again.
		r.p = updated
		return r, nil
	}
	return s.resolve(ctx, store.IDString(r.p.ID))
}

// editableAttributes are the attributes of an edit, in the order GitLab
// names them when none is given.
var editableAttributes = []string{"name", "path", "default_branch", "description", "visibility", "import_url", "tag_list",
	"issues_enabled", "merge_requests_enabled", "jobs_enabled", "wiki_enabled", "snippets_enabled",
	"container_registry_enabled", "shared_runners_enabled", "public_jobs", "only_allow_merge_if_pipeline_succeeds",
	"only_allow_merge_if_all_discussions_are_resolved", "lfs_enabled", "request_access_enabled"}

// trimmed is s without surrounding spaces, nil kept.
func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

// UpdateProject changes a project (project.Service).
func (s *Service) UpdateProject(ctx context.Context, ref string, in project.Fields) (project.Project, error) {
	return s.recordOf(ctx)(s.updateProject(ctx, ref, in))
}

// DeleteProject removes the project, its memberships and stars
// (project.Service); a projects.project event with action "deleted" tells
// the other modules to remove what they own of it (repository, CI data,
// uploads...).
func (s *Service) DeleteProject(ctx context.Context, ref string) error {
	r, err := s.require(ctx, ref, project.RemoveProject)
	if err != nil {
		return err
	}
	pr := auth.FromContext(ctx)
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := members.DeleteBy(tx, "source", sourceKey("project", r.p.ID)); err != nil {
			return err
		}
		if _, err := stars.DeleteBy(tx, "project", store.IDString(r.p.ID)); err != nil {
			return err
		}
		if r.p.ForkedFromID != 0 {
			if src, err := projects.Get(tx, r.p.ForkedFromID); err == nil && src.ForksCount > 0 {
				src.ForksCount--
				if err := projects.Update(tx, src); err != nil {
					return err
				}
			}
		}
		if err := projects.Delete(tx, r.p.ID); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectDeleted, ProjectID: r.p.ID, UserID: pr.UserID()})
	})
}
