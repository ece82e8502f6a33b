package internal

// The HTTP adapter of groups, subgroups and namespaces.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Groups follow GitLab v4 as of 9.x, with subgroups (groups.go and
// subgroups.go say how).

// GroupPath is the :id of a group (number or URL-encoded path).
type GroupPath struct {
	ID string `path:"id" doc:"Group id or URL-encoded path"`
}

// GroupInput carries the fields of group create and edit.
type GroupInput struct {
	Name        *string `json:"name,omitempty"`
	Path        *string `json:"path,omitempty"`
	Description *string `json:"description,omitempty"`
	Visibility  *string `json:"visibility,omitempty" enum:"private,internal,public" doc:"Default: the instance's default_group_visibility (private unless changed)"`
	// Accepted for compatibility; groups show the instance defaults.
	LFSEnabled           *bool `json:"lfs_enabled,omitempty" doc:"Accepted and ignored (always true)"`
	RequestAccessEnabled *bool `json:"request_access_enabled,omitempty" doc:"Accepted and ignored (always false)"`
	// ParentID makes the new group a subgroup; on edit it may only name
	// the current parent (groups are not moved).
	ParentID *int64 `json:"parent_id,omitempty" doc:"The parent group of a subgroup (create only; 0 or absent: top level)"`
}

// GroupListInput is the query of GET /groups, and of the lists of a
// group's subgroups and descendants (exported so that huma binds it when
// embedded).
type GroupListInput struct {
	api.PageParams
	Search         string  `query:"search"`
	OrderBy        string  `query:"order_by" enum:"name,path,id," doc:"Default name"`
	Sort           string  `query:"sort" enum:"asc,desc," doc:"Default asc"`
	Owned          bool    `query:"owned" doc:"Only groups the caller owns"`
	AllAvailable   string  `query:"all_available" enum:"true,false," doc:"false: only the caller's own groups; default: every group the caller can see"`
	MinAccessLevel int     `query:"min_access_level" doc:"Only groups where the caller has at least this level"`
	SkipGroups     []int64 `query:"skip_groups" doc:"Group ids to leave out"`
	TopLevelOnly   bool    `query:"top_level_only" doc:"Only top-level groups, no subgroups"`
	Statistics     bool    `query:"statistics" doc:"Accepted and ignored"`
}

type groupListOutput struct {
	api.PageHeaders
	Body []GroupView
}

type groupOutput struct{ Body *GroupView }

type groupDetailOutput struct{ Body *GroupDetailView }

type groupCreateInput struct{ Body GroupInput }

type groupUpdateInput struct {
	GroupPath
	Body GroupInput
}

type groupProjectsInput struct {
	GroupPath
	api.PageParams
	Archived   string `query:"archived" enum:"true,false," doc:"Only archived (true) or unarchived (false) projects"`
	Visibility string `query:"visibility" enum:"public,internal,private,"`
	OrderBy    string `query:"order_by" enum:"id,name,path,created_at,updated_at,last_activity_at," doc:"Default created_at"`
	Sort       string `query:"sort" enum:"asc,desc," doc:"Default desc"`
	Search     string `query:"search"`
	Simple     bool   `query:"simple"`
	// IncludeSubgroups adds the projects of every group below this one.
	IncludeSubgroups bool `query:"include_subgroups" doc:"Include the projects of subgroups"`
}

// fields are the service's input.
func (b *GroupInput) fields() project.GroupFields {
	return project.GroupFields{Name: b.Name, Path: b.Path, Description: b.Description, Visibility: b.Visibility,
		LFSEnabled: b.LFSEnabled, RequestAccessEnabled: b.RequestAccessEnabled, ParentID: b.ParentID}
}

// filter is the service's filter and page.
func (in *GroupListInput) filter() *groupFilter {
	return &groupFilter{Search: in.Search, OrderBy: in.OrderBy, Sort: in.Sort, Owned: in.Owned, AllAvailable: in.AllAvailable,
		MinAccessLevel: in.MinAccessLevel, SkipGroups: in.SkipGroups, TopLevelOnly: in.TopLevelOnly,
		Offset: in.Offset(), Limit: in.Limit()}
}

type subgroupListInput struct {
	GroupPath
	GroupListInput
}

// registerGroups adds groups and group and project members.
func (h handlers) registerGroups(a *api.API) {
	tags := []string{"groups"}
	api.Register(a, api.Op{ID: "list-groups", Method: http.MethodGet, Path: "/groups", Tags: tags,
		Summary: "Groups the caller can see", Access: api.Public}, func(ctx context.Context, in *GroupListInput) (*groupListOutput, error) {
		rows, total, err := h.listGroups(ctx, in.filter())
		return h.groupList(ctx, in, rows, total, err)
	})
	api.Register(a, api.Op{ID: "create-group", Method: http.MethodPost, Path: "/groups", Tags: tags,
		Summary: "Create a group owned by the caller", Access: api.SignedIn}, func(ctx context.Context, in *groupCreateInput) (*groupOutput, error) {
		g, err := h.createGroup(ctx, in.Body.fields())
		if err != nil {
			return nil, err
		}
		v, err := h.groupView(ctx, g)
		if err != nil {
			return nil, err
		}
		return &groupOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "get-group", Method: http.MethodGet, Path: "/groups/{id}", Tags: tags,
		Summary: "A group with the projects the caller can see", Access: api.Public},
		func(ctx context.Context, in *GroupPath) (*groupDetailOutput, error) {
			r, err := h.resolveGroup(ctx, in.ID)
			if err != nil {
				return nil, err
			}
			return h.groupDetailOf(ctx, r.g)
		})
	api.Register(a, api.Op{ID: "update-group", Method: http.MethodPut, Path: "/groups/{id}", Tags: tags,
		Summary: "Edit a group (Owner or administrator)", Access: api.SignedIn}, func(ctx context.Context, in *groupUpdateInput) (*groupDetailOutput, error) {
		g, err := h.updateGroup(ctx, in.ID, in.Body.fields())
		if err != nil {
			return nil, err
		}
		return h.groupDetailOf(ctx, g)
	})
	api.Register(a, api.Op{ID: "delete-group", Method: http.MethodDelete, Path: "/groups/{id}", Tags: tags,
		Summary: "Delete a group with its projects (Owner or administrator)", Access: api.SignedIn}, func(ctx context.Context, in *GroupPath) (*struct{}, error) {
		return nil, h.DeleteGroup(ctx, in.ID)
	})
	api.Register(a, api.Op{ID: "list-group-projects", Method: http.MethodGet, Path: "/groups/{id}/projects", Tags: tags,
		Summary: "Projects of a group the caller can see", Access: api.Public}, func(ctx context.Context, in *groupProjectsInput) (*listOutput, error) {
		filter := &listFilter{Archived: in.Archived, Visibility: in.Visibility, Search: in.Search, OrderBy: in.OrderBy, Sort: in.Sort,
			Offset: in.Offset(), Limit: in.Limit()}
		rows, total, err := h.groupProjects(ctx, in.ID, filter, in.IncludeSubgroups)
		if err != nil {
			return nil, err
		}
		return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: h.renderList(ctx, rows, in.Simple)}, nil
	})
	h.registerMembers(a)
	h.registerNamespaces(a)
	h.registerSubgroups(a)
}

// groupList answers a page of groups.
func (h handlers) groupList(ctx context.Context, in *GroupListInput, rows []*Namespace, total int, err error) (*groupListOutput, error) {
	if err != nil {
		return nil, err
	}
	out := &groupListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []GroupView{}}
	for _, g := range rows {
		v, err := h.groupView(ctx, g)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

// registerSubgroups adds the lists of a group's subgroups.
func (h handlers) registerSubgroups(a *api.API) {
	tags := []string{"groups"}
	below := func(all bool) func(context.Context, *subgroupListInput) (*groupListOutput, error) {
		return func(ctx context.Context, in *subgroupListInput) (*groupListOutput, error) {
			rows, total, err := h.listBelow(ctx, in.ID, in.filter(), all)
			return h.groupList(ctx, &in.GroupListInput, rows, total, err)
		}
	}
	api.Register(a, api.Op{ID: "list-subgroups", Method: http.MethodGet, Path: "/groups/{id}/subgroups", Tags: tags,
		Summary: "A group's direct subgroups the caller can see", Access: api.Public}, below(false))
	api.Register(a, api.Op{ID: "list-descendant-groups", Method: http.MethodGet, Path: "/groups/{id}/descendant_groups", Tags: tags,
		Summary: "Every group below a group that the caller can see", Access: api.Public}, below(true))
}

// GroupView is the Group resource of GitLab v4: full_name and full_path
// start with the ancestors' names and paths, parent_id is a subgroup's
// parent (null for a top-level group).
// lfs_enabled and request_access_enabled are not stored per group: they
// show the instance defaults (true, false).
type GroupView struct {
	ID                   int64   `json:"id"`
	Name                 string  `json:"name"`
	Path                 string  `json:"path"`
	Description          string  `json:"description"`
	Visibility           string  `json:"visibility"`
	LFSEnabled           bool    `json:"lfs_enabled"`
	AvatarURL            *string `json:"avatar_url"`
	WebURL               string  `json:"web_url"`
	RequestAccessEnabled bool    `json:"request_access_enabled"`
	FullName             string  `json:"full_name"`
	FullPath             string  `json:"full_path"`
	ParentID             *int64  `json:"parent_id"`
}

// GroupDetailView is a single group: the group, its projects and the
// projects shared with it, each list holding only what the caller may see
// (at most groupDetailProjects of each, newest first; the full lists are
// GET /groups/:id/projects and /projects).
type GroupDetailView struct {
	GroupView
	Projects       []ProjectView `json:"projects"`
	SharedProjects []ProjectView `json:"shared_projects"`
}

func (h handlers) groupView(ctx context.Context, g *Namespace) (GroupView, error) {
	ni, err := h.namespaceInfo(ctx, g)
	if err != nil {
		return GroupView{}, err
	}
	return GroupView{
		ID: g.ID, Name: g.Name, Path: g.Path, Description: g.Description, Visibility: g.Visibility,
		LFSEnabled: true, WebURL: api.ExternalURLFrom(ctx) + "/groups/" + ni.path,
		FullName: ni.name, FullPath: ni.path, ParentID: ni.parentID(),
	}, nil
}

// groupDetailOf answers a single group with the projects the caller may
// see.
func (h handlers) groupDetailOf(ctx context.Context, g *Namespace) (*groupDetailOutput, error) {
	own, shared, err := h.groupDetail(ctx, g)
	if err != nil {
		return nil, err
	}
	gv, err := h.groupView(ctx, g)
	if err != nil {
		return nil, err
	}
	v := &GroupDetailView{GroupView: gv, Projects: []ProjectView{}, SharedProjects: []ProjectView{}}
	for _, r := range own {
		v.Projects = append(v.Projects, h.render(ctx, r))
	}
	for _, r := range shared {
		v.SharedProjects = append(v.SharedProjects, h.render(ctx, r))
	}
	return &groupDetailOutput{Body: v}, nil
}

// The namespaces API follows GitLab v4 (9.x); namespaces.go says how.

// NamespaceDetailView is an entry of /namespaces.
type NamespaceDetailView struct {
	ID                          int64  `json:"id"`
	Name                        string `json:"name"`
	Path                        string `json:"path"`
	Kind                        string `json:"kind"`
	FullPath                    string `json:"full_path"`
	ParentID                    *int64 `json:"parent_id"`
	MembersCountWithDescendants *int   `json:"members_count_with_descendants,omitempty"`
}

type namespaceListInput struct {
	api.PageParams
	Search string `query:"search" doc:"Only namespaces whose name or path contains this"`
}

type namespaceListOutput struct {
	api.PageHeaders
	Body []NamespaceDetailView
}

type namespacePath struct {
	ID string `path:"id" doc:"Namespace id or URL-encoded path"`
}

type namespaceOutput struct{ Body *NamespaceDetailView }

func (h handlers) registerNamespaces(a *api.API) {
	tags := []string{"namespaces"}
	api.Register(a, api.Op{ID: "list-namespaces", Method: http.MethodGet, Path: "/namespaces", Tags: tags,
		Summary: "The caller's namespace and groups (every namespace for administrators)", Access: api.SignedIn},
		func(ctx context.Context, in *namespaceListInput) (*namespaceListOutput, error) {
			rows, total, err := h.listNamespaces(ctx, in.Search, in.Offset(), in.Limit())
			if err != nil {
				return nil, err
			}
			views := make([]NamespaceDetailView, 0, len(rows))
			for _, r := range rows {
				views = append(views, namespaceView(r))
			}
			return &namespaceListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
		})
	api.Register(a, api.Op{ID: "get-namespace", Method: http.MethodGet, Path: "/namespaces/{id}", Tags: tags,
		Summary: "A namespace the caller may see", Access: api.SignedIn},
		func(ctx context.Context, in *namespacePath) (*namespaceOutput, error) {
			r, err := h.getNamespace(ctx, in.ID)
			if err != nil {
				return nil, err
			}
			v := namespaceView(r)
			return &namespaceOutput{Body: &v}, nil
		})
}

// namespaceView renders a namespace.
func namespaceView(r namespaceRow) NamespaceDetailView {
	return NamespaceDetailView{ID: r.ns.ID, Name: r.ni.ownName(), Path: r.ni.ownPath(), Kind: r.ns.Kind, FullPath: r.ni.path,
		ParentID: r.ni.parentID(), MembersCountWithDescendants: r.members}
}
