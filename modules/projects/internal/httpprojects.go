package internal

// The HTTP adapter of projects: GitLab's routes decode their parameters,
// call the service, render the views (httpviews.go) and leave the
// service's errors to mapErrors (http.go).

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// ProjectPath is the :id of a project (number or URL-encoded full path).
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

type projectOutput struct{ Body *ProjectView }

// ProjectInput carries the fields of create and edit.
type ProjectInput struct {
	Name          *string   `json:"name,omitempty"`
	Path          *string   `json:"path,omitempty"`
	NamespaceID   *int64    `json:"namespace_id,omitempty"`
	DefaultBranch *string   `json:"default_branch,omitempty"`
	Description   *string   `json:"description,omitempty"`
	Visibility    *string   `json:"visibility,omitempty" enum:"private,internal,public"`
	ImportURL     *string   `json:"import_url,omitempty"`
	TagList       *[]string `json:"tag_list,omitempty"`
	FeatureInput
}

// FeatureInput are the optional switches.
type FeatureInput struct {
	IssuesEnabled                             *bool `json:"issues_enabled,omitempty"`
	MergeRequestsEnabled                      *bool `json:"merge_requests_enabled,omitempty"`
	JobsEnabled                               *bool `json:"jobs_enabled,omitempty"`
	WikiEnabled                               *bool `json:"wiki_enabled,omitempty"`
	SnippetsEnabled                           *bool `json:"snippets_enabled,omitempty"`
	ContainerRegistryEnabled                  *bool `json:"container_registry_enabled,omitempty"`
	SharedRunnersEnabled                      *bool `json:"shared_runners_enabled,omitempty"`
	PublicJobs                                *bool `json:"public_jobs,omitempty"`
	OnlyAllowMergeIfPipelineSucceeds          *bool `json:"only_allow_merge_if_pipeline_succeeds,omitempty"`
	OnlyAllowMergeIfAllDiscussionsAreResolved *bool `json:"only_allow_merge_if_all_discussions_are_resolved,omitempty"`
	LFSEnabled                                *bool `json:"lfs_enabled,omitempty"`
	RequestAccessEnabled                      *bool `json:"request_access_enabled,omitempty"`
}

// fields are the service's input.
func (b *ProjectInput) fields() project.Fields {
	f := b.FeatureInput
	return project.Fields{Name: b.Name, Path: b.Path, NamespaceID: b.NamespaceID, DefaultBranch: b.DefaultBranch,
		Description: b.Description, Visibility: b.Visibility, ImportURL: b.ImportURL, TagList: b.TagList,
		Switches: project.Switches{IssuesEnabled: f.IssuesEnabled, MergeRequestsEnabled: f.MergeRequestsEnabled,
			JobsEnabled: f.JobsEnabled, WikiEnabled: f.WikiEnabled, SnippetsEnabled: f.SnippetsEnabled,
			ContainerRegistryEnabled: f.ContainerRegistryEnabled, SharedRunnersEnabled: f.SharedRunnersEnabled,
			PublicJobs: f.PublicJobs, OnlyAllowMergeIfPipelineSucceeds: f.OnlyAllowMergeIfPipelineSucceeds,
			OnlyAllowMergeIfAllDiscussionsAreResolved: f.OnlyAllowMergeIfAllDiscussionsAreResolved,
			LFSEnabled: f.LFSEnabled, RequestAccessEnabled: f.RequestAccessEnabled}}
}

type createInput struct{ Body ProjectInput }

type createForUserInput struct {
	UserID int64 `path:"user_id"`
	Body   projectForUserInput
}

// projectForUserInput is ProjectInput as POST /projects/user/:user_id
// documents it: name is required there (on POST /projects a path will do,
// and an edit takes any one attribute). Only the tags differ, so
// ProjectInput(b) converts it. A null is let through the schema
// (nullable) for the service to call it missing, as an absent one.
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

// ListInput is GET /projects.
type ListInput struct {
	api.PageParams
	Archived   string `query:"archived" enum:"true,false," doc:"Only archived (true) or unarchived (false) projects"`
	Visibility string `query:"visibility" enum:"public,internal,private,"`
	OrderBy    string `query:"order_by" enum:"id,name,path,created_at,updated_at,last_activity_at," doc:"Default created_at"`
	Sort       string `query:"sort" enum:"asc,desc," doc:"Default desc"`
	Search     string `query:"search"`
	Simple     bool   `query:"simple"`
	Owned      bool   `query:"owned"`
	Membership bool   `query:"membership"`
	Starred    bool   `query:"starred"`
}

// filter is the service's filter and page.
func (in *ListInput) filter() *listFilter {
	return &listFilter{Archived: in.Archived, Visibility: in.Visibility, OrderBy: in.OrderBy, Sort: in.Sort,
		Search: in.Search, Owned: in.Owned, Membership: in.Membership, Starred: in.Starred,
		Offset: in.Offset(), Limit: in.Limit()}
}

type listOutput struct {
	api.PageHeaders
	// Full or simple views, depending on simple=true.
	Body []any
}

// list answers a page of projects.
func (h handlers) list(ctx context.Context, in *ListInput, rows []*resolved, total int, err error) (*listOutput, error) {
	if err != nil {
		return nil, err
	}
	return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: h.renderList(ctx, rows, in.Simple)}, nil
}

func (h handlers) registerProjects(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "list-projects", Method: http.MethodGet, Path: "/projects", Tags: tags,
		Summary: "Projects the caller can see", Access: api.Public}, func(ctx context.Context, in *ListInput) (*listOutput, error) {
		rows, total, err := h.listProjects(ctx, in.filter())
		return h.list(ctx, in, rows, total, err)
	})
	api.Register(a, api.Op{ID: "get-project", Method: http.MethodGet, Path: "/projects/{id}", Tags: tags,
		Summary: "A project", Access: api.Public}, func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
		return h.one(ctx)(h.resolve(ctx, in.ID))
	})
	api.Register(a, api.Op{ID: "create-project", Method: http.MethodPost, Path: "/projects", Tags: tags,
		Summary: "Create a project owned by the caller", Access: api.SignedIn}, func(ctx context.Context, in *createInput) (*projectOutput, error) {
		return h.one(ctx)(h.createOwn(ctx, in.Body.fields()))
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
		b := ProjectInput(in.Body)
		return h.one(ctx)(h.createFor(ctx, in.UserID, b.fields()))
	})
	a.DocumentAlias(http.MethodPost, "/projects/user/{user_id}", "/users/{user_id}/projects")
	api.Register(a, api.Op{ID: "update-project", Method: http.MethodPut, Path: "/projects/{id}", Tags: tags,
		Summary: "Edit a project", Access: api.SignedIn}, func(ctx context.Context, in *updateInput) (*projectOutput, error) {
		return h.one(ctx)(h.updateProject(ctx, in.ID, in.Body.fields()))
	})
	api.Register(a, api.Op{ID: "delete-project", Method: http.MethodDelete, Path: "/projects/{id}", Tags: tags,
		Summary: "Delete a project and everything it owns", Access: api.SignedIn}, func(ctx context.Context, in *ProjectPath) (*struct{}, error) {
		return nil, h.DeleteProject(ctx, in.ID)
	})
}

func (h handlers) registerStars(a *api.API) {
	tags := []string{"projects"}
	star := func(on bool) func(context.Context, *ProjectPath) (*projectOutput, error) {
		return func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
			r, err := h.setStar(ctx, in.ID, on)
			if errors.Is(err, project.ErrUnchanged) {
				return nil, api.NotModified
			}
			return h.one(ctx)(r, err)
		}
	}
	api.Register(a, api.Op{ID: "star-project", Method: http.MethodPost, Path: "/projects/{id}/star", Tags: tags,
		Summary: "Star a project; 304 when already starred", Access: api.SignedIn}, star(true))
	api.Register(a, api.Op{ID: "unstar-project", Method: http.MethodPost, Path: "/projects/{id}/unstar", Tags: tags,
		Summary: "Unstar a project; 304 when not starred", Access: api.SignedIn}, star(false))
}

func (h handlers) registerArchive(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "archive-project", Method: http.MethodPost, Path: "/projects/{id}/archive", Tags: tags,
		Summary: "Archive a project (owners and administrators); idempotent", Access: api.SignedIn},
		func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
			return h.one(ctx)(h.setArchived(ctx, in.ID, true))
		})
	api.Register(a, api.Op{ID: "unarchive-project", Method: http.MethodPost, Path: "/projects/{id}/unarchive", Tags: tags,
		Summary: "Unarchive a project (owners and administrators); idempotent", Access: api.SignedIn},
		func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
			return h.one(ctx)(h.setArchived(ctx, in.ID, false))
		})
}

// ForkInput is POST /projects/:id/fork. namespace is GitLab 9's parameter;
// namespace_id and namespace_path are what newer clients (client-go) send.
type ForkInput struct {
	Namespace     *string `json:"namespace,omitempty" doc:"Id or path of the target namespace; default the caller's own"`
	NamespaceID   *int64  `json:"namespace_id,omitempty" doc:"Id of the target namespace"`
	NamespacePath *string `json:"namespace_path,omitempty" doc:"Path of the target namespace"`
	Name          *string `json:"name,omitempty" doc:"Name of the fork; default the source's"`
	Path          *string `json:"path,omitempty" doc:"Path of the fork; default the source's"`
}

type forkInput struct {
	ProjectPath
	Body ForkInput
}

func (h handlers) registerFork(a *api.API) {
	api.Register(a, api.Op{ID: "fork-project", Method: http.MethodPost, Path: "/projects/{id}/fork", Tags: []string{"projects"},
		Summary: "Fork a project into the caller's namespace or the one given", Access: api.SignedIn},
		func(ctx context.Context, in *forkInput) (*projectOutput, error) {
			b := in.Body
			return h.one(ctx)(h.fork(ctx, in.ID, project.ForkFields{Namespace: b.Namespace, NamespaceID: b.NamespaceID,
				NamespacePath: b.NamespacePath, Name: b.Name, Path: b.Path}))
		})
}

// ShareInput is POST /projects/:id/share.
type ShareInput struct {
	GroupID     int64   `json:"group_id" required:"true" doc:"The group to share with"`
	GroupAccess int     `json:"group_access" required:"true" enum:"10,20,30,40,50" doc:"Access level the group's members get at most"`
	ExpiresAt   *string `json:"expires_at,omitempty" nullable:"true" doc:"YYYY-MM-DD; the share ends when that day begins (UTC)"`
}

type projectShareInput struct {
	ProjectPath
	Body ShareInput
}

// ShareLinkView answers a share. A share is identified by its group within
// the project (DELETE /projects/:id/share/:group_id), so its id is the
// group's id.
type ShareLinkView struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	GroupID     int64     `json:"group_id"`
	GroupAccess int       `json:"group_access"`
	ExpiresAt   *api.Date `json:"expires_at"`
}

type projectShareOutput struct{ Body *ShareLinkView }

type projectUnshareInput struct {
	ProjectPath
	GroupID int64 `path:"group_id" doc:"The group to stop sharing with"`
}

func (h handlers) registerShare(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "share-project", Method: http.MethodPost, Path: "/projects/{id}/share", Tags: tags,
		Summary: "Share a project with a group (Master and up)", Access: api.SignedIn},
		func(ctx context.Context, in *projectShareInput) (*projectShareOutput, error) {
			sh, err := h.ShareProject(ctx, in.ID, project.ShareFields{GroupID: in.Body.GroupID, GroupAccess: in.Body.GroupAccess,
				ExpiresAt: in.Body.ExpiresAt})
			if err != nil {
				return nil, err
			}
			v := &ShareLinkView{ID: sh.GroupID, ProjectID: sh.ProjectID, GroupID: sh.GroupID, GroupAccess: sh.GroupAccess}
			if sh.ExpiresAt != nil {
				d := api.Date(*sh.ExpiresAt)
				v.ExpiresAt = &d
			}
			return &projectShareOutput{Body: v}, nil
		})
	api.Register(a, api.Op{ID: "unshare-project", Method: http.MethodDelete, Path: "/projects/{id}/share/{group_id}", Tags: tags,
		Summary: "Stop sharing a project with a group (Master and up); 204", Access: api.SignedIn},
		func(ctx context.Context, in *projectUnshareInput) (*struct{}, error) {
			return nil, h.UnshareProject(ctx, in.ID, in.GroupID)
		})
}

type transferInput struct {
	ProjectPath
	Body struct {
		Namespace string `json:"namespace" required:"true" doc:"Id or path of the target namespace"`
	}
}

func (h handlers) registerTransfer(a *api.API) {
	api.Register(a, api.Op{ID: "transfer-project", Method: http.MethodPut, Path: "/projects/{id}/transfer", Tags: []string{"projects"},
		Summary: "Move a project to another namespace (Owner or administrator)", Access: api.SignedIn},
		func(ctx context.Context, in *transferInput) (*projectOutput, error) {
			return h.one(ctx)(h.transfer(ctx, in.ID, in.Body.Namespace))
		})
}

type projectUsersInput struct {
	ProjectPath
	api.PageParams
	Search string `query:"search" doc:"Part of a username or name"`
}

type projectUsersOutput struct {
	api.PageHeaders
	Body []identity.BasicUser
}

func (h handlers) registerProjectUsers(a *api.API) {
	api.Register(a, api.Op{ID: "list-project-users", Method: http.MethodGet, Path: "/projects/{id}/users", Tags: []string{"projects"},
		Summary: "Users who are members of a project, directly or through groups", Access: api.Public},
		func(ctx context.Context, in *projectUsersInput) (*projectUsersOutput, error) {
			users, total, err := h.projectUsers(ctx, in.ID, in.Search, in.Offset(), in.Limit())
			if err != nil {
				return nil, err
			}
			base := api.ExternalURLFrom(ctx)
			views := make([]identity.BasicUser, 0, len(users))
			for _, u := range users {
				views = append(views, identity.NewBasicUser(base, u))
			}
			return &projectUsersOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
		})
}

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

func (h handlers) registerProjectLists(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "list-project-forks", Method: http.MethodGet, Path: "/projects/{id}/forks", Tags: tags,
		Summary: "The forks of a project the caller can see", Access: api.Public},
		func(ctx context.Context, in *forksInput) (*listOutput, error) {
			rows, total, err := h.listForks(ctx, in.ID, in.filter())
			return h.list(ctx, &in.ListInput, rows, total, err)
		})
	api.Register(a, api.Op{ID: "list-user-projects", Method: http.MethodGet, Path: "/users/{user_id}/projects", Tags: tags,
		Summary: "The projects of a user's personal namespace the caller can see", Access: api.Public},
		func(ctx context.Context, in *userProjectsInput) (*listOutput, error) {
			rows, total, err := h.listUserProjects(ctx, in.UserID, in.filter())
			return h.list(ctx, &in.ListInput, rows, total, err)
		})
}
