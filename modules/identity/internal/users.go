package internal

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/event"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The accounts of user.Service: list, read, create, update, delete, block
// and unblock. The HTTP adapter is httpusers.go.

// User states (the contract's).
const (
	StateActive      = user.StateActive
	StateBlocked     = user.StateBlocked
	StateLDAPBlocked = user.StateLDAPBlocked
)

var _ user.Service = (*Service)(nil)

// requireAdmin lets administrators (and the server itself) through.
func requireAdmin(ctx context.Context) error {
	p := auth.FromContext(ctx)
	switch {
	case p.IsAnonymous():
		return auth.ErrUnauthorized
	case !p.IsAdmin():
		return auth.Forbidden("")
	}
	return nil
}

// mayManage lets through the user userID themself and administrators: who
// may manage a user's keys, addresses and tokens.
func mayManage(ctx context.Context, userID int64) error {
	p := auth.FromContext(ctx)
	switch {
	case p.IsAnonymous():
		return auth.ErrUnauthorized
	case p.UserID() != userID && !p.IsAdmin():
		return auth.Forbidden("")
	}
	return nil
}

// CurrentAccount implements user.Service: the caller's account, read
// through the cache.
func (s *Service) CurrentAccount(ctx context.Context) (user.Account, error) {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return user.Account{}, auth.ErrUnauthorized
	}
	u, err := s.cachedUser(ctx, p.UserID())
	if err != nil {
		return user.Account{}, err
	}
	return accountOf(u), nil
}

// Accounts implements user.Service.
func (s *Service) Accounts(ctx context.Context, opts user.ListOptions, offset, limit int) ([]user.Account, int, error) {
	search := strings.ToLower(opts.Search)
	match := func(u *User) bool {
		if opts.Active && u.State != StateActive {
			return false
		}
		if opts.Blocked && u.State == StateActive {
			return false
		}
		if opts.External && !u.External {
			return false
		}
		if opts.Admins && !u.Admin {
			return false
		}
		if search != "" &&
			!strings.Contains(strings.ToLower(u.Username), search) &&
			!strings.Contains(strings.ToLower(u.Name), search) &&
			!strings.Contains(strings.ToLower(u.Email), search) {
			return false
		}
		return true
	}
	var page []*User
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if opts.Username != "" { // an exact lookup through the index
			u, err := users.GetBy(tx, "username", store.Fold(opts.Username))
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if match(u) {
				total = 1
				page = store.Window([]*User{u}, offset, limit)
			}
			return nil
		}
		filtered := opts.Active || opts.Blocked || opts.External || opts.Admins || opts.Search != ""
		if !filtered { // no filter: the count is kept, and skipped rows are not decoded
			var err error
			page, total, err = users.Page(tx, false, offset, limit)
			return err
		}
		keep := func(u *User) (bool, error) {
			if !match(u) {
				return true, nil
			}
			if total >= offset && len(page) < limit {
				page = append(page, u)
			}
			total++
			return true, nil
		}
		// A search of store.MinSearch bytes or more reads only the users
		// whose texts hold its trigrams, in id order as the scan would.
		if opts.Search != "" {
			ids, ok, err := users.Search(tx, "search", opts.Search)
			if err != nil {
				return err
			}
			if ok {
				for _, id := range ids {
					u, err := users.Get(tx, id)
					if err != nil {
						return err
					}
					if _, err := keep(u); err != nil {
						return err
					}
				}
				return nil
			}
		}
		return users.Scan(tx, false, 0, keep)
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]user.Account, 0, len(page))
	for _, u := range page {
		out = append(out, accountOf(u))
	}
	return out, total, nil
}

// userByID reads a user; ErrUserNotFound for none.
func (s *Service) userByID(ctx context.Context, id int64) (*User, error) {
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		u, err = users.Get(tx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || id <= 0 {
		return nil, user.ErrUserNotFound
	}
	return u, err
}

// Account implements user.Service.
func (s *Service) Account(ctx context.Context, id int64) (user.Account, error) {
	u, err := s.userByID(ctx, id)
	if err != nil {
		return user.Account{}, err
	}
	return accountOf(u), nil
}

// applyFields copies the given fields onto u (the validation is the
// caller's).
func applyFields(u *User, f *user.Fields) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&u.Email, f.Email)
	set(&u.Username, f.Username)
	set(&u.Name, f.Name)
	set(&u.Skype, f.Skype)
	set(&u.Linkedin, f.Linkedin)
	set(&u.Twitter, f.Twitter)
	set(&u.WebsiteURL, f.WebsiteURL)
	set(&u.Organization, f.Organization)
	if f.Bio != nil {
		b := *f.Bio
		u.Bio = &b
	}
	if f.Location != nil {
		l := *f.Location
		u.Location = &l
	}
	if f.ProjectsLimit != nil {
		u.ProjectsLimit = *f.ProjectsLimit
	}
	if f.Admin != nil {
		u.Admin = *f.Admin
	}
	if f.CanCreateGroup != nil {
		u.CanCreateGroup = *f.CanCreateGroup
	}
	if f.External != nil {
		u.External = *f.External
	}
	if f.Provider != nil && f.ExternUID != nil && *f.Provider != "" && *f.ExternUID != "" {
		replaced := false
		for i := range u.Identities {
			if u.Identities[i].Provider == *f.Provider {
				u.Identities[i].ExternUID = *f.ExternUID
				replaced = true
			}
		}
		if !replaced {
			u.Identities = append(u.Identities, Identity{Provider: *f.Provider, ExternUID: *f.ExternUID})
		}
	}
}

// CreateAccount implements user.Service.
func (s *Service) CreateAccount(ctx context.Context, in user.NewAccount) (user.Account, error) {
	if err := requireAdmin(ctx); err != nil {
		return user.Account{}, err
	}
	now := s.now().UTC()
	u := &User{State: StateActive, ProjectsLimit: 100000, CanCreateGroup: true, ColorSchemeID: 1, CreatedAt: now, Identities: []Identity{}}
	applyFields(u, &in.Fields)
	if in.Confirm == nil || *in.Confirm {
		u.ConfirmedAt = &now
	}
	password := ""
	if in.ResetPassword {
		// The user gets a random password nobody knows; the UserCreated
		// event lets the notifications module mail a link to choose one
		// (PasswordResets).
		secret, err := newSecret()
		if err != nil {
			return user.Account{}, err
		}
		password, u.PasswordExpired = secret, true
	} else if in.Password != nil {
		password = *in.Password
	}
	if v := validateUser(u, password, true); v != nil {
		return user.Account{}, v
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return user.Account{}, err
	}
	u.PasswordHash = hash
	err = s.update(ctx, func(tx *store.Tx) error {
		if emailTaken(tx, u.Email, 0) {
			return ValidationError{"email": {"has already been taken"}}
		}
		if err := users.Insert(tx, u); err != nil {
			return err
		}
		ev := userCreated(u)
		ev.ResetPassword = in.ResetPassword
		return s.bus.Publish(tx, ev)
	})
	if err != nil {
		return user.Account{}, conflictAsValidation(err)
	}
	return accountOf(u), nil
}

// conflictAsValidation turns a unique-index conflict into GitLab's
// {"message":{"field":["has already been taken"]}}.
func conflictAsValidation(err error) error {
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return ValidationError{conflict.Index: {"has already been taken"}}
	}
	return err
}

// UpdateAccount implements user.Service.
func (s *Service) UpdateAccount(ctx context.Context, id int64, in user.Fields) (user.Account, error) {
	if err := requireAdmin(ctx); err != nil {
		return user.Account{}, err
	}
	// The hash is computed before the write: bcrypt takes tens of
	// milliseconds, and inside the transaction every other writer of the
	// group commit would wait for it. A password the validation refuses
	// wastes one hash, nothing more.
	var password string
	var hash []byte
	if in.Password != nil {
		password = *in.Password
		if passwordProblem(password) == "" { // otherwise the validation below refuses it
			var err error
			if hash, err = bcrypt.GenerateFromPassword([]byte(password), s.cost); err != nil {
				return user.Account{}, err
			}
		}
	}
	var out *User
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return user.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		if in.Admin != nil && !*in.Admin {
			if err := keepsAnAdmin(tx, u, "demoted"); err != nil {
				return err
			}
		}
		applyFields(u, &in)
		if v := validateUser(u, password, in.Password != nil); v != nil {
			return v
		}
		if in.Password != nil {
			u.PasswordHash = hash
			u.PasswordExpired = true // an admin-set password must be changed
		}
		if in.Email != nil {
			if emailTaken(tx, u.Email, u.ID) {
				return &user.TakenError{Field: "email"}
			}
			// Promoting one of the user's own secondary addresses: it stops
			// being a secondary one.
			if e, err := emails.GetBy(tx, "email", store.Fold(u.Email)); err == nil && e.UserID == u.ID {
				if err := emails.Delete(tx, e.ID); err != nil {
					return err
				}
			}
		}
		err = users.Update(tx, u)
		var conflict *store.ConflictError
		if errors.As(err, &conflict) {
			return &user.TakenError{Field: conflict.Index}
		}
		out = u
		return err
	})
	if err != nil {
		return user.Account{}, err
	}
	return accountOf(out), nil
}

// DeleteAccount implements user.Service.
func (s *Service) DeleteAccount(ctx context.Context, id int64) (*user.Account, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	var deleted *User
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil // idempotent: nothing deleted
		}
		if err != nil {
			return err
		}
		if u.ID == auth.FromContext(ctx).UserID() {
			return auth.Forbidden("you cannot delete yourself")
		}
		if err := keepsAnAdmin(tx, u, "deleted"); err != nil {
			return err
		}
		if err := deleteOwned(tx, u.ID); err != nil {
			return err
		}
		if err := users.Delete(tx, u.ID); err != nil {
			return err
		}
		deleted = u
		return s.bus.Publish(tx, event.UserDeleted{UserID: u.ID, Username: u.Username, Name: u.Name, Email: u.Email})
	})
	if err != nil || deleted == nil {
		return nil, err
	}
	a := accountOf(deleted)
	return &a, nil
}

// deleteOwned removes a user's keys, e-mails and tokens (sessions included).
func deleteOwned(tx *store.Tx, userID int64) error {
	key := strconv.FormatInt(userID, 10)
	if _, err := keys.DeleteBy(tx, "user", key); err != nil {
		return err
	}
	if _, err := emails.DeleteBy(tx, "user", key); err != nil {
		return err
	}
	_, err := tokens.DeleteBy(tx, "user", key)
	return err
}

// Block implements user.Service.
func (s *Service) Block(ctx context.Context, id int64) (bool, error) {
	return s.setState(ctx, id, true)
}

// Unblock implements user.Service.
func (s *Service) Unblock(ctx context.Context, id int64) (bool, error) {
	return s.setState(ctx, id, false)
}

// setState blocks or unblocks a user. The answer says whether the state
// changed: blocking a blocked user or unblocking an active one changes
// nothing, as GitLab's state machine answers a transition it cannot make.
func (s *Service) setState(ctx context.Context, id int64, block bool) (bool, error) {
	if err := requireAdmin(ctx); err != nil {
		return false, err
	}
	changed := false
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return user.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		if block && u.State == StateActive {
			if u.ID == auth.FromContext(ctx).UserID() {
				return auth.Forbidden("you cannot block yourself")
			}
			if err := keepsAnAdmin(tx, u, "blocked"); err != nil {
				return err
			}
		}
		if u.State == StateLDAPBlocked {
			if block {
				return auth.Forbidden("LDAP blocked users cannot be modified by the API")
			}
			return auth.Forbidden("LDAP blocked users cannot be unblocked by the API")
		}
		wasActive := u.State == StateActive
		if wasActive != block {
			return nil // already in the state asked for: nothing to write
		}
		changed = true
		u.State = StateActive
		if block {
			u.State = StateBlocked
		}
		if err := users.Update(tx, u); err != nil {
			return err
		}
		if block {
			return s.blocked(tx, u)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// blocked finishes a block in its transaction: the user's private token is
// revoked (a blocked user's credentials are refused anyway; this one must
// not come back when they are unblocked) and UserBlocked is published.
func (s *Service) blocked(tx *store.Tx, u *User) error {
	if err := revokePrivateTokens(tx, u.ID); err != nil {
		return err
	}
	return s.bus.Publish(tx, userBlocked(u))
}

// keepsAnAdmin refuses a change that would leave no active administrator:
// what is "blocked", "deleted" or "demoted" u, an active administrator.
func keepsAnAdmin(tx *store.Tx, u *User, what string) error {
	if !u.Admin || u.State != StateActive {
		return nil
	}
	n, err := otherActiveAdmins(tx, u.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return auth.Forbidden("the last active administrator cannot be " + what)
	}
	return nil
}
