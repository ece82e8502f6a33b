package target

import (
	"context"

	"github.com/fennec-forge/fennec/modules/identity"
)

// UserViews renders the users of a page of targets (authors, assignees,
// mergers) as GitLab's basic user, a deleted one as the ghost, looking
// each up once however often the page names them.
type UserViews struct {
	users identity.Users
	base  string
	seen  map[int64]identity.BasicUser
}

// NewUserViews renders users with links under base (the external URL).
func NewUserViews(users identity.Users, base string) *UserViews {
	return &UserViews{users: users, base: base, seen: map[int64]identity.BasicUser{}}
}

// User is user id's view, read with ctx (a transaction's context joins
// its read).
func (v *UserViews) User(ctx context.Context, id int64) identity.BasicUser {
	if u, ok := v.seen[id]; ok {
		return u
	}
	var b identity.BasicUser
	if u, err := v.users.UserByID(ctx, id); err == nil {
		b = identity.NewBasicUser(v.base, u)
	} else {
		b = identity.GhostUser(v.base, id)
	}
	v.seen[id] = b
	return b
}
