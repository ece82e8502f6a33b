package internal

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// The namespaces API follows GitLab v4 (9.x):
//
//   - GET /namespaces lists the caller's own user namespace and the groups
//     they are a direct member of (GitLab's User#namespaces); administrators
//     get every namespace. search matches name or path.
//   - GET /namespaces/:id (number or URL-encoded path; GitLab added it after
//     9.x, clients use it) answers a namespace the caller owns, a group they
//     may see, or anything to an administrator; otherwise 404 Namespace Not
//     Found, never 403.
//   - A user's namespace row is made on first use (a project, or this API):
//     listing makes the caller's own so it always has an id. An
//     administrator's list holds only user namespaces that exist.
//   - members_count_with_descendants is on groups only, for administrators
//     (as GitLab's entity exposes it); parent_id is a subgroup's parent.

// NamespaceDetailView is an entry of /namespaces.
type NamespaceDetailView struct {
	ID                          uint64  `json:"id"`
	Name                        string  `json:"name"`
	Path                        string  `json:"path"`
	Kind                        string  `json:"kind"`
	FullPath                    string  `json:"full_path"`
	ParentID                    *uint64 `json:"parent_id"`
	MembersCountWithDescendants *int    `json:"members_count_with_descendants,omitempty"`
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

func (s *Service) registerNamespaces(a *api.API) {
	tags := []string{"namespaces"}
	api.Register(a, api.Op{ID: "list-namespaces", Method: http.MethodGet, Path: "/namespaces", Tags: tags,
		Summary: "The caller's namespace and groups (every namespace for administrators)", Access: api.SignedIn}, s.listNamespaces)
	api.Register(a, api.Op{ID: "get-namespace", Method: http.MethodGet, Path: "/namespaces/{id}", Tags: tags,
		Summary: "A namespace the caller may see", Access: api.SignedIn}, s.getNamespace)
}

func (s *Service) listNamespaces(ctx context.Context, in *namespaceListInput) (*namespaceListOutput, error) {
	pr := auth.FromContext(ctx)
	uid := uint64(pr.UserID())
	// The caller's namespace row is made once; a read needs no write
	// transaction after that.
	var exists bool
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		_, err := namespaces.GetBy(tx, "owner", u64(uid))
		exists = err == nil
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}); err != nil {
		return nil, err
	}
	if !exists {
		if err := s.db.Update(ctx, func(tx *store.Tx) error {
			_, err := userNamespace(tx, uid, s.now().UTC())
			return err
		}); err != nil {
			return nil, err
		}
	}
	var rows []*Namespace
	err := s.db.View(ctx, func(tx *store.Tx) error {
		own, err := namespaces.GetBy(tx, "owner", u64(uid))
		if err != nil {
			return err
		}
		if pr.IsAdmin() {
			return namespaces.Scan(tx, false, 0, func(n *Namespace) (bool, error) {
				rows = append(rows, n)
				return true, nil
			})
		}
		rows = append(rows, own)
		levels, _, err := callerGroups(tx, pr, s.now())
		if err != nil {
			return err
		}
		for gid := range levels {
			g, err := namespaces.Get(tx, gid)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			rows = append(rows, g)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(in.Search))
	views := make([]NamespaceDetailView, 0, len(rows))
	for _, n := range rows {
		v, err := s.namespaceView(ctx, n, pr.IsAdmin())
		if errors.Is(err, identity.ErrUserNotFound) {
			continue // the owner is gone; the row goes with the user
		}
		if err != nil {
			return nil, err
		}
		if q != "" && !strings.Contains(strings.ToLower(v.Name), q) && !strings.Contains(strings.ToLower(v.Path), q) {
			continue
		}
		views = append(views, v)
	}
	sort.Slice(views, func(i, j int) bool { return views[i].ID < views[j].ID })
	return &namespaceListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(views)), Body: api.Window(views, in.PageParams)}, nil
}

func (s *Service) getNamespace(ctx context.Context, in *namespacePath) (*namespaceOutput, error) {
	pr := auth.FromContext(ctx)
	var n *Namespace
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if id, path := api.ParseID(in.ID); id > 0 {
			n, err = namespaces.Get(tx, uint64(id))
		} else if strings.TrimSpace(path) == "" {
			err = store.ErrNotFound
		} else {
			n, err = s.findNamespace(tx, path)
		}
		if err != nil {
			return err
		}
		switch {
		case pr.IsAdmin():
			return nil
		case n.Kind == KindUser:
			if n.OwnerID != uint64(pr.UserID()) {
				return store.ErrNotFound
			}
			return nil
		default:
			level := groupMemberLevel(tx, n.ID, uint64(pr.UserID()), s.now())
			if !canSeeGroup(tx, pr, n, level, s.now()) {
				return store.ErrNotFound
			}
			return nil
		}
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrNamespaceNotFound
	}
	if err != nil {
		return nil, err
	}
	v, err := s.namespaceView(ctx, n, pr.IsAdmin())
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, project.ErrNamespaceNotFound
	}
	if err != nil {
		return nil, err
	}
	return &namespaceOutput{Body: &v}, nil
}

// namespaceView renders a namespace; withCount adds a group's member count.
func (s *Service) namespaceView(ctx context.Context, n *Namespace, withCount bool) (NamespaceDetailView, error) {
	ni, err := s.namespaceInfo(ctx, n)
	if err != nil {
		return NamespaceDetailView{}, err
	}
	v := NamespaceDetailView{ID: n.ID, Name: ni.ownName(), Path: ni.ownPath(), Kind: n.Kind, FullPath: ni.path, ParentID: ni.parentID()}
	if withCount && n.Kind == KindGroup {
		var count int
		err := s.db.View(ctx, func(tx *store.Tx) error {
			ids, err := members.IDsBy(tx, "source", sourceKey(KindGroup, n.ID))
			count = len(ids)
			return err
		})
		if err != nil {
			return NamespaceDetailView{}, err
		}
		v.MembersCountWithDescendants = &count
	}
	return v, nil
}
