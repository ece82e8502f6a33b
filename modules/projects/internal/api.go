package internal

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// NewRoutes registers the projects module's operations.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "projects", Register: s.register}
}

// ProjectPath is the :id of a project (number or URL-encoded full path).
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

type projectOutput struct{ Body *ProjectView }

type createInput struct{ Body ProjectInput }

type createForUserInput struct {
	UserID int64 `path:"user_id"`
	Body   projectForUserInput
}

// projectForUserInput is ProjectInput as POST /projects/user/:user_id
// documents it: name is required there (on POST /projects a path will do,
// and an edit takes any one attribute). Only the tags differ, so
// ProjectInput(b) converts it. A null is let through the schema
// (nullable) for the handler to call it missing, as an absent one.
type projectForUserInput struct {
	Name          *string   `json:"name,omitempty" required:"true" nullable:"true"`
	Path          *string   `json:"path,omitempty"`
	NamespaceID   *int64    `json:"namespace_id,omitempty"`
	DefaultBranch *string   `json:"default_branch,omitempty"`
	Description   *string   `json:"description,omitempty"`
	Visibility    *string   `json:"visibility,omitempty" enum:"private,internal,public"`
	ImportURL     *string   `json:"import_url,omitempty"`
	TagList       *[]string `json:"tag_list,omitempty"`
	FeatureInput
}

type updateInput struct {
	ProjectPath
	Body ProjectInput
}

func (s *Service) register(a *api.API) {
	mapErrors(a)
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "list-projects", Method: http.MethodGet, Path: "/projects", Tags: tags,
		Summary: "Projects the caller can see", Access: api.Public}, s.list)
	api.Register(a, api.Op{ID: "get-project", Method: http.MethodGet, Path: "/projects/{id}", Tags: tags,
		Summary: "A project", Access: api.Public}, func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
		r, err := s.resolve(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		v := s.render(ctx, r)
		return &projectOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "create-project", Method: http.MethodPost, Path: "/projects", Tags: tags,
		Summary: "Create a project owned by the caller", Access: api.SignedIn}, func(ctx context.Context, in *createInput) (*projectOutput, error) {
		r, err := s.create(ctx, auth.FromContext(ctx).UserID(), in.Body)
		if err != nil {
			return nil, err
		}
		v := s.render(ctx, r)
		return &projectOutput{Body: &v}, nil
	})
	// GitLab's path is /projects/user/:user_id, which a ServeMux pattern
	// cannot hold beside /projects/:id/star and friends: registered as
	// /users/:user_id/projects and aliased.
	a.Alias(http.MethodPost, regexp.MustCompile(`^/api/v4/projects/user/([^/]+)/?$`), func(m []string) string {
		return "/api/v4/users/" + m[1] + "/projects"
	})
	api.Register(a, api.Op{ID: "create-project-for-user", Method: http.MethodPost, Path: "/users/{user_id}/projects", Tags: tags,
		Summary:     "Create a project for another user (administrators)",
		Description: "Also served at POST /projects/user/{user_id}, GitLab's path.", Access: api.AdminOnly}, func(ctx context.Context, in *createForUserInput) (*projectOutput, error) {
		if in.Body.Name == nil || strings.TrimSpace(*in.Body.Name) == "" {
			return nil, api.Missing("name")
		}
		r, err := s.create(ctx, in.UserID, ProjectInput(in.Body))
		if err != nil {
			return nil, err
		}
		v := s.render(ctx, r)
		return &projectOutput{Body: &v}, nil
	})
	a.DocumentAlias(http.MethodPost, "/projects/user/{user_id}", "/users/{user_id}/projects")
	api.Register(a, api.Op{ID: "update-project", Method: http.MethodPut, Path: "/projects/{id}", Tags: tags,
		Summary: "Edit a project", Access: api.SignedIn}, s.update)
	api.Register(a, api.Op{ID: "delete-project", Method: http.MethodDelete, Path: "/projects/{id}", Tags: tags,
		Summary: "Delete a project and everything it owns", Access: api.SignedIn}, s.delete)
	s.registerActions(a)
	s.registerGroups(a)
}

func (s *Service) update(ctx context.Context, in *updateInput) (*projectOutput, error) {
	b := in.Body
	if b == (ProjectInput{}) {
		// GitLab's edit takes any one attribute (python-gitlab sends only
		// what changed); name is no more required than the others.
		return nil, api.AtLeastOne(editableAttributes...)
	}
	r, err := s.require(ctx, in.ID, project.AdminProject)
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
			return nil, api.NotValidValue("visibility")
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
			p.Path = strings.TrimSpace(*b.Path)
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
		b.FeatureInput.apply(&p.Features)
		p.UpdatedAt = s.now().UTC()
		if err := projects.Update(tx, p); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectUpdated, ProjectID: int64(p.ID), UserID: pr.UserID()})
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
	} else if r, err = s.resolve(ctx, u64(r.p.ID)); err != nil {
		return nil, err
	}
	view := s.render(ctx, r)
	return &projectOutput{Body: &view}, nil
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

// delete removes the project, its memberships and stars; a projects.project
// event with action "deleted" tells the other modules to remove what they
// own of it (repository, CI data, uploads...).
func (s *Service) delete(ctx context.Context, in *ProjectPath) (*struct{}, error) {
	r, err := s.require(ctx, in.ID, project.RemoveProject)
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	return nil, s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := members.DeleteBy(tx, "source", sourceKey("project", r.p.ID)); err != nil {
			return err
		}
		if _, err := stars.DeleteBy(tx, "project", u64(r.p.ID)); err != nil {
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
		return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectDeleted, ProjectID: int64(r.p.ID), UserID: pr.UserID()})
	})
}
