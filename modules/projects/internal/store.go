package internal

import (
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Namespace kinds.
const (
	KindUser  = "user"
	KindGroup = "group"
)

// Namespace owns projects: a user's personal namespace or a group. A user
// namespace's path and name are the user's username and name, read from
// identity when rendered, so a rename needs no copy here.
type Namespace struct {
	ID      int64  `json:"id"`
	Kind    string `json:"kind"`
	OwnerID int64  `json:"owner_id,omitempty"` // user namespaces
	Path    string `json:"path,omitempty"`     // groups
	Name    string `json:"name,omitempty"`     // groups
	// ParentID is a subgroup's parent group (0: a top-level group).
	ParentID    int64     `json:"parent_id,omitempty"`
	Description string    `json:"description,omitempty"`
	Visibility  string    `json:"visibility,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

func (n *Namespace) RecordID() int64      { return n.ID }
func (n *Namespace) SetRecordID(id int64) { n.ID = id }

// Share is a project shared with a group.
type Share struct {
	GroupID   int64      `json:"group_id"`
	Access    int        `json:"access"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Project is the stored project record.
type Project struct {
	ID             int64     `json:"id"`
	NamespaceID    int64     `json:"namespace_id"`
	Name           string    `json:"name"`
	Path           string    `json:"path"`
	Description    *string   `json:"description"`
	DefaultBranch  string    `json:"default_branch"`
	Visibility     string    `json:"visibility"`
	CreatorID      int64     `json:"creator_id"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	LastActivityAt time.Time `json:"last_activity_at"`
	TagList        []string  `json:"tag_list"`
	Archived       bool      `json:"archived"`
	ImportURL      string    `json:"import_url,omitempty"`
	ImportStatus   string    `json:"import_status,omitempty"`
	ImportError    string    `json:"import_error,omitempty"`
	ForkedFromID   int64     `json:"forked_from_id,omitempty"`
	StarCount      int       `json:"star_count"`
	ForksCount     int       `json:"forks_count"`
	RunnersToken   string    `json:"runners_token"`
	SharedWith     []Share   `json:"shared_with"`
	project.Features
}

func (p *Project) RecordID() int64      { return p.ID }
func (p *Project) SetRecordID(id int64) { p.ID = id }

// Member gives a user an access level on a project or a group.
type Member struct {
	ID          int64      `json:"id"`
	SourceKind  string     `json:"source_kind"` // project or group
	SourceID    int64      `json:"source_id"`
	UserID      int64      `json:"user_id"`
	AccessLevel int        `json:"access_level"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
}

func (m *Member) RecordID() int64      { return m.ID }
func (m *Member) SetRecordID(id int64) { m.ID = id }

// Star is a user's star on a project.
type Star struct {
	ID        int64 `json:"id"`
	UserID    int64 `json:"user_id"`
	ProjectID int64 `json:"project_id"`
}

func (s *Star) RecordID() int64      { return s.ID }
func (s *Star) SetRecordID(id int64) { s.ID = id }

// projectPathKey identifies a project by namespace and path, case-folded.
func projectPathKey(ns int64, path string) string { return store.IDString(ns) + "/" + store.Fold(path) }

func sourceKey(kind string, id int64) string { return kind + ":" + store.IDString(id) }

var (
	namespaces = store.NewTable[int64, Namespace]("projects.namespaces",
		store.Index[Namespace]{Name: "owner", Unique: true, Keys: func(n *Namespace) []string {
			if n.Kind != KindUser {
				return nil
			}
			return []string{store.IDString(n.OwnerID)}
		}},
		store.Index[Namespace]{Name: "path", Unique: true, Keys: func(n *Namespace) []string {
			if n.Kind != KindGroup {
				return nil
			}
			return []string{groupPathKey(n.ParentID, n.Path)}
		}},
		// A group's subgroups. Top-level groups have no key, so the index
		// needed no rebuild when subgroups came.
		store.Index[Namespace]{Name: "parent", Keys: func(n *Namespace) []string {
			if n.Kind != KindGroup || n.ParentID == 0 {
				return nil
			}
			return []string{store.IDString(n.ParentID)}
		}},
		// GET /groups?search= looks in a group's name and path
		// (matchesGroup), through their trigrams; user namespaces have
		// none.
		store.Index[Namespace]{Name: "search", Search: true, Keys: func(n *Namespace) []string {
			if n.Kind != KindGroup {
				return nil
			}
			return []string{n.Name, n.Path}
		}},
	)
	projects = store.NewTable[int64, Project]("projects.projects",
		store.Index[Project]{Name: "path", Unique: true, Keys: func(p *Project) []string { return []string{projectPathKey(p.NamespaceID, p.Path)} }},
		store.Index[Project]{Name: "name", Unique: true, Keys: func(p *Project) []string { return []string{store.IDString(p.NamespaceID) + "/" + store.Fold(p.Name)} }},
		store.Index[Project]{Name: "namespace", Keys: func(p *Project) []string { return []string{store.IDString(p.NamespaceID)} }},
		store.Index[Project]{Name: "visibility", Keys: func(p *Project) []string { return []string{p.Visibility} }},
		// A runner registers with a project's runners_token; the key is
		// the token's hash, so the index holds no secret of its own.
		store.Index[Project]{Name: "runners_token", Keys: func(p *Project) []string {
			if p.RunnersToken == "" {
				return nil
			}
			return []string{runnersTokenKey(p.RunnersToken)}
		}},
		// GET /projects/:id/forks lists a project's direct forks.
		store.Index[Project]{Name: "forked_from", Keys: func(p *Project) []string {
			if p.ForkedFromID == 0 {
				return nil
			}
			return []string{store.IDString(p.ForkedFromID)}
		}},
		// GET /projects?search= looks in the name, the path and the
		// description (matches), through their trigrams.
		store.Index[Project]{Name: "search", Search: true, Keys: func(p *Project) []string {
			if p.Description == nil {
				return []string{p.Name, p.Path}
			}
			return []string{p.Name, p.Path, *p.Description}
		}},
		store.Index[Project]{Name: "shared_with", Keys: func(p *Project) []string {
			out := make([]string, 0, len(p.SharedWith))
			for _, s := range p.SharedWith {
				out = append(out, store.IDString(s.GroupID))
			}
			return out
		}},
	)
	members = store.NewTable[int64, Member]("projects.members",
		store.Index[Member]{Name: "membership", Unique: true, Keys: func(m *Member) []string {
			return []string{sourceKey(m.SourceKind, m.SourceID) + "/" + store.IDString(m.UserID)}
		}},
		store.Index[Member]{Name: "source", Keys: func(m *Member) []string { return []string{sourceKey(m.SourceKind, m.SourceID)} }},
		store.Index[Member]{Name: "user", Keys: func(m *Member) []string { return []string{store.IDString(m.UserID)} }},
	)
	stars = store.NewTable[int64, Star]("projects.stars",
		store.Index[Star]{Name: "star", Unique: true, Keys: func(s *Star) []string { return []string{store.IDString(s.UserID) + "/" + store.IDString(s.ProjectID)} }},
		store.Index[Star]{Name: "user", Keys: func(s *Star) []string { return []string{store.IDString(s.UserID)} }},
		store.Index[Star]{Name: "project", Keys: func(s *Star) []string { return []string{store.IDString(s.ProjectID)} }},
	)
)

// Tables lists the module's tables for bucket declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{namespaces, projects, members, stars, hooks, appSettings}
}
