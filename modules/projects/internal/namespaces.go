package internal

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

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

// namespaceRow is a namespace with its paths and names, and for a group
// shown to an administrator its number of members.
type namespaceRow struct {
	ns      *Namespace
	ni      nsInfo
	members *int
}

// listNamespaces is GET /namespaces: a page of the caller's namespace and
// groups (every namespace for administrators) whose name or path holds
// search, in id order, and how many there are.
func (s *Service) listNamespaces(ctx context.Context, search string, offset, limit int) ([]namespaceRow, int, error) {
	pr := auth.FromContext(ctx)
	uid := pr.UserID()
	// The caller's namespace row is made once; a read needs no write
	// transaction after that.
	var exists bool
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		_, err := namespaces.GetBy(tx, "owner", store.IDString(uid))
		exists = err == nil
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}); err != nil {
		return nil, 0, err
	}
	if !exists {
		if err := s.db.Update(ctx, func(tx *store.Tx) error {
			_, err := userNamespace(tx, uid, s.now().UTC())
			return err
		}); err != nil {
			return nil, 0, err
		}
	}
	q := strings.ToLower(strings.TrimSpace(search))
	if pr.IsAdmin() {
		return s.adminNamespaces(ctx, q, offset, limit)
	}
	var rows []*Namespace
	err := s.db.View(ctx, func(tx *store.Tx) error {
		own, err := namespaces.GetBy(tx, "owner", store.IDString(uid))
		if err != nil {
			return err
		}
		rows = append(rows, own)
		levels, _, err := callerGroups(tx, pr, s.now())
		if err != nil {
			return err
		}
		rows, err = appendNamespaces(tx, rows, slices.Collect(maps.Keys(levels)))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out, err := s.namespaceRows(ctx, rows, q, false)
	if err != nil {
		return nil, 0, err
	}
	return store.Window(out, offset, limit), len(out), nil
}

// appendNamespaces appends to rows the namespaces of ids that exist.
func appendNamespaces(tx *store.Tx, rows []*Namespace, ids []int64) ([]*Namespace, error) {
	for _, id := range ids {
		n, err := namespaces.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, n)
	}
	return rows, nil
}

// namespaceRows builds the rows of the namespaces that match q (in their
// own name or path; "" matches all), by id, leaving out user namespaces
// whose owner is gone.
func (s *Service) namespaceRows(ctx context.Context, rows []*Namespace, q string, admin bool) ([]namespaceRow, error) {
	out := make([]namespaceRow, 0, len(rows))
	for _, n := range rows {
		row, err := s.namespaceRow(ctx, n, admin)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue // the owner is gone; the row goes with the user
		}
		if err != nil {
			return nil, err
		}
		if q != "" && !strings.Contains(strings.ToLower(row.ni.ownName()), q) && !strings.Contains(strings.ToLower(row.ni.ownPath()), q) {
			continue
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ns.ID < out[j].ns.ID })
	return out, nil
}

// adminNamespaces is an administrator's GET /namespaces: every namespace,
// at a cost that does not grow with the instance.
//   - Without a search, only the page is read and its rows built; the
//     count is the table's.
//   - A search of store.MinSearch bytes or more reads the groups whose name
//     or path holds its trigrams (the namespaces' search index) and the
//     namespaces of the users whose account search matches (a superset:
//     it also looks in e-mail addresses), then applies the rule to those.
//   - A shorter search reads every namespace, as before.
func (s *Service) adminNamespaces(ctx context.Context, q string, offset, limit int) ([]namespaceRow, int, error) {
	var owners []int64
	searched := len(q) >= store.MinSearch
	if searched {
		accounts, _, err := s.accounts.Accounts(ctx, identity.ListOptions{Search: q}, 0, math.MaxInt)
		if err != nil {
			return nil, 0, err
		}
		for _, a := range accounts {
			owners = append(owners, a.ID)
		}
	}
	var rows []*Namespace
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		switch {
		case q == "":
			rows, total, err = namespaces.Page(tx, false, offset, limit)
			return err
		case searched:
			ids, ok, err := namespaces.Search(tx, "search", q)
			if err != nil || !ok {
				return err
			}
			for _, uid := range owners {
				n, err := namespaces.GetBy(tx, "owner", store.IDString(uid))
				if errors.Is(err, store.ErrNotFound) {
					continue // no namespace made yet: not listed, as before
				}
				if err != nil {
					return err
				}
				rows = append(rows, n)
			}
			rows, err = appendNamespaces(tx, rows, ids)
			return err
		default:
			return namespaces.Scan(tx, false, 0, func(n *Namespace) (bool, error) {
				rows = append(rows, n)
				return true, nil
			})
		}
	})
	if err != nil {
		return nil, 0, err
	}
	out, err := s.namespaceRows(ctx, rows, q, true)
	if err != nil {
		return nil, 0, err
	}
	if q == "" { // rows is the page already, total the table's count
		return out, total, nil
	}
	return store.Window(out, offset, limit), len(out), nil
}

// getNamespace is GET /namespaces/:id: a namespace the caller owns, a
// group they may see, or any to an administrator; anything else is
// project.ErrNamespaceNotFound, never ErrForbidden.
func (s *Service) getNamespace(ctx context.Context, ref string) (namespaceRow, error) {
	pr := auth.FromContext(ctx)
	var n *Namespace
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if id, path := parseRef(ref); id > 0 {
			n, err = namespaces.Get(tx, id)
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
			if n.OwnerID != pr.UserID() {
				return store.ErrNotFound
			}
			return nil
		default:
			level := groupMemberLevel(tx, n.ID, pr.UserID(), s.now())
			if !canSeeGroup(tx, pr, n, level, s.now()) {
				return store.ErrNotFound
			}
			return nil
		}
	})
	if errors.Is(err, store.ErrNotFound) {
		return namespaceRow{}, project.ErrNamespaceNotFound
	}
	if err != nil {
		return namespaceRow{}, err
	}
	row, err := s.namespaceRow(ctx, n, pr.IsAdmin())
	if errors.Is(err, identity.ErrUserNotFound) {
		return namespaceRow{}, project.ErrNamespaceNotFound
	}
	return row, err
}

// namespaceRow completes a namespace with its paths and names; withCount
// adds a group's member count.
func (s *Service) namespaceRow(ctx context.Context, n *Namespace, withCount bool) (namespaceRow, error) {
	ni, err := s.namespaceInfo(ctx, n)
	if err != nil {
		return namespaceRow{}, err
	}
	row := namespaceRow{ns: n, ni: ni}
	if withCount && n.Kind == KindGroup {
		var count int
		err := s.db.View(ctx, func(tx *store.Tx) error {
			ids, err := members.IDsBy(tx, "source", sourceKey(KindGroup, n.ID))
			count = len(ids)
			return err
		})
		if err != nil {
			return namespaceRow{}, err
		}
		row.members = &count
	}
	return row, nil
}
