package internal

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// NamespaceView is the namespace embedded in a project.
type NamespaceView struct {
	ID       uint64 `json:"id"`
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
	GroupID          uint64 `json:"group_id"`
	GroupName        string `json:"group_name"`
	GroupAccessLevel int    `json:"group_access_level"`
}

// ForkedFromView is the source of a fork.
type ForkedFromView struct {
	ID                uint64 `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
	WebURL            string `json:"web_url"`
}

// SimpleView is a project with simple=true.
type SimpleView struct {
	ID                uint64 `json:"id"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
	WebURL            string `json:"web_url"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// ProjectView is the Project resource of the spec.
type ProjectView struct {
	ID                uint64           `json:"id"`
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
	CreatorID         uint64           `json:"creator_id"`
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

// nsInfo is a namespace with its current full path and full name (a
// subgroup's start with its ancestors'), and for a group its chain.
type nsInfo struct {
	ns    *Namespace
	path  string
	name  string
	owner *identity.UserInfo
	chain []*Namespace // groups: root first, ending with ns
}

// ownPath and ownName are the namespace's own path and name, without its
// ancestors', as the namespace object shows them beside full_path.
func (n nsInfo) ownPath() string {
	if n.ns.Kind == KindGroup {
		return n.ns.Path
	}
	return n.path
}

func (n nsInfo) ownName() string {
	if n.ns.Kind == KindGroup {
		return n.ns.Name
	}
	return n.name
}

// parentID is a subgroup's parent, nil otherwise (parent_id: null).
func (n nsInfo) parentID() *uint64 {
	if n.ns == nil || n.ns.ParentID == 0 {
		return nil
	}
	id := n.ns.ParentID
	return &id
}

// groupIDs are the namespace's group and its ancestors, nearest first.
func (n nsInfo) groupIDs() []int64 {
	out := make([]int64, 0, len(n.chain))
	for i := len(n.chain) - 1; i >= 0; i-- {
		out = append(out, int64(n.chain[i].ID))
	}
	return out
}

func (s *Service) namespaceInfo(ctx context.Context, ns *Namespace) (nsInfo, error) {
	if ns.Kind == KindGroup {
		chain := []*Namespace{ns}
		if ns.ParentID != 0 {
			if err := s.db.View(ctx, func(tx *store.Tx) error {
				var err error
				chain, err = groupChain(tx, ns)
				return err
			}); err != nil {
				return nsInfo{}, err
			}
		}
		return nsInfo{ns: ns, path: fullPath(chain), name: fullName(chain), chain: chain}, nil
	}
	u, err := s.users.UserByID(ctx, int64(ns.OwnerID))
	if err != nil {
		return nsInfo{}, err
	}
	return nsInfo{ns: ns, path: u.Username, name: u.Name, owner: &u}, nil
}

func (s *Service) urls(ctx context.Context, nsPath, path string) (web, httpRepo, sshRepo string) {
	base := api.ExternalURLFrom(ctx)
	full := nsPath + "/" + path
	web = base + "/" + full
	host := base
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return web, web + ".git", s.sshURL(host, full)
}

// sshEndpoint is the host and port git over SSH is reached at; an empty
// host is the external URL's.
type sshEndpoint struct {
	host string
	port int
}

// SetSSHEndpoint records where git over SSH is served, for
// ssh_url_to_repo (projects.SSHEndpoint).
func (s *Service) SetSSHEndpoint(host string, port int) {
	s.ssh.Store(&sshEndpoint{host: host, port: port})
}

// sshURL is ssh_url_to_repo for the project at full path: scp-like syntax
// on port 22 (or before any SSH server said where it is), an ssh:// URL on
// another port, as GitLab writes them.
func (s *Service) sshURL(defaultHost, full string) string {
	e := s.ssh.Load()
	if e == nil {
		return "git@" + defaultHost + ":" + full + ".git"
	}
	host := e.host
	if host == "" {
		host = defaultHost
	}
	if e.port == 22 || e.port == 0 {
		return "git@" + host + ":" + full + ".git"
	}
	return "ssh://git@" + net.JoinHostPort(host, strconv.Itoa(e.port)) + "/" + full + ".git"
}

func (s *Service) simpleView(ctx context.Context, p *Project, ni nsInfo) SimpleView {
	web, httpRepo, _ := s.urls(ctx, ni.path, p.Path)
	return SimpleView{ID: p.ID, HTTPURLToRepo: httpRepo, WebURL: web, Name: p.Name,
		NameWithNamespace: ni.name + " / " + p.Name, Path: p.Path, PathWithNamespace: ni.path + "/" + p.Path}
}

// view renders p; withPerms adds the caller's permissions, admin adds the
// runners token (for those who administer the project).
func (s *Service) view(ctx context.Context, p *Project, ni nsInfo, l *levels, admin bool, groupNames map[uint64]string) ProjectView {
	web, httpRepo, sshRepo := s.urls(ctx, ni.path, p.Path)
	v := ProjectView{
		ID: p.ID, Description: p.Description, DefaultBranch: p.DefaultBranch, Visibility: p.Visibility,
		SSHURLToRepo: sshRepo, HTTPURLToRepo: httpRepo, WebURL: web, TagList: append([]string{}, p.TagList...),
		Name: p.Name, NameWithNamespace: ni.name + " / " + p.Name, Path: p.Path, PathWithNamespace: ni.path + "/" + p.Path,
		CreatedAt: api.NewTime(p.CreatedAt), LastActivityAt: api.NewTime(p.LastActivityAt), CreatorID: p.CreatorID,
		Namespace: NamespaceView{ID: ni.ns.ID, Name: ni.ownName(), Path: ni.ownPath(), Kind: ni.ns.Kind, FullPath: ni.path},
		Archived:  p.Archived, ForksCount: p.ForksCount, StarCount: p.StarCount, OpenIssuesCount: s.openIssuesCount(ctx, p),
		SharedWithGroups: []ShareView{}, ImportStatus: project.ImportNone, Features: p.Features,
	}
	switch {
	case p.ImportStatus != "":
		v.ImportStatus = p.ImportStatus
	case p.ImportURL != "":
		v.ImportStatus = project.ImportScheduled
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

// slug turns a name into a path: accents dropped ("Ünïcödé" -> "unicode"),
// lowercase, runs of other characters become one dash
// ("My Prøject!" -> "my-project").
func slug(name string) string {
	plain, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), name)
	if err != nil {
		plain = name
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(plain) {
		if t, ok := transliterate[r]; ok {
			b.WriteString(t)
			dash = false
			continue
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '.':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return strings.Trim(b.String(), "-.")
}

// transliterate covers Latin letters that do not decompose into a base
// letter and a mark.
var transliterate = map[rune]string{
	'ø': "o", 'æ': "ae", 'œ': "oe", 'ß': "ss", 'đ': "d", 'ł': "l", 'þ': "th", 'ð': "d", 'ı': "i",
}
