package internal

// The GitLab JSON views of the module's resources and their rendering:
// what the HTTP adapter answers. The service hands resolved records over;
// nothing here decides who may see what.

import (
	"context"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// NewBaseURL is the service's BaseURL: the external URL of the request a
// context carries ("" outside one).
func NewBaseURL() BaseURL { return api.ExternalURLFrom }

// NamespaceView is the namespace embedded in a project.
type NamespaceView struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	FullPath string `json:"full_path"`
}

// OwnerView is the owner of a personal project.
type OwnerView struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	CreatedAt api.Time `json:"created_at"`
}

// AccessView is one side of "permissions".
type AccessView struct {
	AccessLevel       int `json:"access_level"`
	NotificationLevel int `json:"notification_level"`
}

// PermissionsView says what the caller has on the project.
type PermissionsView struct {
	ProjectAccess *AccessView `json:"project_access"`
	GroupAccess   *AccessView `json:"group_access"`
}

// ShareView is one entry of shared_with_groups.
type ShareView struct {
	GroupID          int64  `json:"group_id"`
	GroupName        string `json:"group_name"`
	GroupAccessLevel int    `json:"group_access_level"`
}

// ForkedFromView is the source of a fork.
type ForkedFromView struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
	WebURL            string `json:"web_url"`
}

// SimpleView is a project with simple=true.
type SimpleView struct {
	ID                int64  `json:"id"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
	WebURL            string `json:"web_url"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// ProjectView is the Project resource of the spec.
type ProjectView struct {
	ID                int64            `json:"id"`
	Description       *string          `json:"description"`
	DefaultBranch     string           `json:"default_branch"`
	Visibility        string           `json:"visibility"`
	SSHURLToRepo      string           `json:"ssh_url_to_repo"`
	HTTPURLToRepo     string           `json:"http_url_to_repo"`
	WebURL            string           `json:"web_url"`
	TagList           []string         `json:"tag_list"`
	Owner             *OwnerView       `json:"owner,omitempty"`
	Name              string           `json:"name"`
	NameWithNamespace string           `json:"name_with_namespace"`
	Path              string           `json:"path"`
	PathWithNamespace string           `json:"path_with_namespace"`
	OpenIssuesCount   int              `json:"open_issues_count"`
	CreatedAt         api.Time         `json:"created_at"`
	LastActivityAt    api.Time         `json:"last_activity_at"`
	CreatorID         int64            `json:"creator_id"`
	Namespace         NamespaceView    `json:"namespace"`
	Permissions       *PermissionsView `json:"permissions,omitempty"`
	Archived          bool             `json:"archived"`
	AvatarURL         *string          `json:"avatar_url"`
	ForksCount        int              `json:"forks_count"`
	StarCount         int              `json:"star_count"`
	RunnersToken      string           `json:"runners_token,omitempty"`
	SharedWithGroups  []ShareView      `json:"shared_with_groups"`
	ForkedFrom        *ForkedFromView  `json:"forked_from_project,omitempty"`
	ImportStatus      string           `json:"import_status"`
	ImportError       *string          `json:"import_error,omitempty"`
	project.Features
}

func (h handlers) simpleView(ctx context.Context, p *Project, ni nsInfo) SimpleView {
	web, httpRepo, _ := h.urls(ctx, ni.path, p.Path)
	return SimpleView{ID: p.ID, HTTPURLToRepo: httpRepo, WebURL: web, Name: p.Name,
		NameWithNamespace: ni.name + " / " + p.Name, Path: p.Path, PathWithNamespace: ni.path + "/" + p.Path}
}

// view renders p; withPerms adds the caller's permissions, admin adds the
// runners token (for those who administer the project).
func (h handlers) view(ctx context.Context, p *Project, ni nsInfo, l *levels, admin bool, groupNames map[int64]string) ProjectView {
	web, httpRepo, sshRepo := h.urls(ctx, ni.path, p.Path)
	v := ProjectView{
		ID: p.ID, Description: p.Description, DefaultBranch: p.DefaultBranch, Visibility: p.Visibility,
		SSHURLToRepo: sshRepo, HTTPURLToRepo: httpRepo, WebURL: web, TagList: append([]string{}, p.TagList...),
		Name: p.Name, NameWithNamespace: ni.name + " / " + p.Name, Path: p.Path, PathWithNamespace: ni.path + "/" + p.Path,
		CreatedAt: api.NewTime(p.CreatedAt), LastActivityAt: api.NewTime(p.LastActivityAt), CreatorID: p.CreatorID,
		Namespace: NamespaceView{ID: ni.ns.ID, Name: ni.ownName(), Path: ni.ownPath(), Kind: ni.ns.Kind, FullPath: ni.path},
		Archived:  p.Archived, ForksCount: p.ForksCount, StarCount: p.StarCount, OpenIssuesCount: h.openIssuesCount(ctx, p),
		SharedWithGroups: []ShareView{}, ImportStatus: importStatus(p), Features: p.Features,
	}
	if p.ImportError != "" {
		v.ImportError = &p.ImportError
	}
	if ni.owner != nil {
		v.Owner = &OwnerView{ID: ni.owner.ID, Name: ni.owner.Name, CreatedAt: api.NewTime(ni.owner.CreatedAt)}
	}
	if l != nil {
		v.Permissions = &PermissionsView{}
		if l.project > 0 {
			v.Permissions.ProjectAccess = &AccessView{AccessLevel: l.project, NotificationLevel: 3}
		}
		if l.group > 0 {
			v.Permissions.GroupAccess = &AccessView{AccessLevel: l.group, NotificationLevel: 3}
		}
	}
	if admin {
		v.RunnersToken = p.RunnersToken
	}
	for _, sh := range p.SharedWith {
		v.SharedWithGroups = append(v.SharedWithGroups, ShareView{GroupID: sh.GroupID, GroupName: groupNames[sh.GroupID], GroupAccessLevel: sh.Access})
	}
	return v
}

// render renders a resolved project as the caller sees it: permissions,
// the runners token for those who administer it, the source of a fork.
func (h handlers) render(ctx context.Context, r *resolved) ProjectView {
	pr := auth.FromContext(ctx)
	v := h.view(ctx, r.p, r.ni, &r.l, allowed(pr, r.p, r.l, project.AdminProject), h.sharedGroupNames(ctx, r.p))
	if src, ni := h.forkSource(ctx, r.p); src != nil {
		sv := h.simpleView(ctx, src, *ni)
		v.ForkedFrom = &ForkedFromView{ID: sv.ID, Name: sv.Name, NameWithNamespace: sv.NameWithNamespace, Path: sv.Path,
			PathWithNamespace: sv.PathWithNamespace, HTTPURLToRepo: sv.HTTPURLToRepo, WebURL: sv.WebURL}
	}
	return v
}

// one answers a command or a query on one project.
func (h handlers) one(ctx context.Context) func(*resolved, error) (*projectOutput, error) {
	return func(r *resolved, err error) (*projectOutput, error) {
		if err != nil {
			return nil, err
		}
		v := h.render(ctx, r)
		return &projectOutput{Body: &v}, nil
	}
}

// renderList renders rows (namespaces complete: withNamespaces) as full
// project views, or simple ones.
func (h handlers) renderList(ctx context.Context, rows []*resolved, simple bool) []any {
	out := make([]any, 0, len(rows))
	for _, r := range rows {
		if simple {
			out = append(out, h.simpleView(ctx, r.p, r.ni))
			continue
		}
		v := h.render(ctx, r)
		out = append(out, &v)
	}
	return out
}
