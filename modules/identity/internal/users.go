package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/event"
)

// User states.
const (
	StateActive      = "active"
	StateBlocked     = "blocked"
	StateLDAPBlocked = "ldap_blocked" // blocked by directory synchronisation
)

// Parameter structs embedded in inputs must be exported types: Huma cannot
// set an embedded field of an unexported type.

// UserIDPath is the :id of a user.
type UserIDPath struct {
	ID int64 `path:"id" doc:"User id"`
}

type listUsersInput struct {
	api.PageParams
	Active   bool   `query:"active" doc:"Only active users (only true is supported)"`
	Blocked  bool   `query:"blocked" doc:"Only blocked users (only true is supported)"`
	External bool   `query:"external" doc:"Only external users"`
	Search   string `query:"search" doc:"Matches username, name or e-mail"`
	Username string `query:"username" doc:"Exact username"`
}

type listOutput struct {
	api.PageHeaders
	// Users render as public views for normal callers and full views for
	// administrators, so the element type varies.
	Body []any
}

type userOutput struct {
	Body any
}

// UserFields are the profile fields of create and modify (an exported type:
// it is embedded in an input, which Huma can only fill when exported).
type UserFields struct {
	Email          *string `json:"email,omitempty"`
	Username       *string `json:"username,omitempty"`
	Name           *string `json:"name,omitempty"`
	Password       *string `json:"password,omitempty"`
	Skype          *string `json:"skype,omitempty"`
	Linkedin       *string `json:"linkedin,omitempty"`
	Twitter        *string `json:"twitter,omitempty"`
	WebsiteURL     *string `json:"website_url,omitempty"`
	Organization   *string `json:"organization,omitempty"`
	Bio            *string `json:"bio,omitempty"`
	Location       *string `json:"location,omitempty"`
	ProjectsLimit  *int    `json:"projects_limit,omitempty"`
	ExternUID      *string `json:"extern_uid,omitempty"`
	Provider       *string `json:"provider,omitempty"`
	Admin          *bool   `json:"admin,omitempty"`
	CanCreateGroup *bool   `json:"can_create_group,omitempty"`
	External       *bool   `json:"external,omitempty"`
}

type createUserInput struct {
	Body struct {
		Email         string  `json:"email" required:"true"`
		Username      string  `json:"username" required:"true"`
		Name          string  `json:"name" required:"true"`
		Password      *string `json:"password,omitempty"`
		ResetPassword bool    `json:"reset_password,omitempty" doc:"Generate a password the user must change; takes priority over password"`
		Confirm       *bool   `json:"confirm,omitempty" doc:"Mark the e-mail confirmed (default true)"`
		UserFields
	}
}

type updateUserInput struct {
	UserIDPath
	Body UserFields
}

func (s *Service) registerUsers(a *api.API) {
	readScopes := []string{auth.ScopeAPI, auth.ScopeReadUser}
	api.Register(a, api.Op{ID: "list-users", Method: http.MethodGet, Path: "/users", Tags: []string{"users"},
		Summary: "List users", Access: api.Public, Scopes: readScopes}, s.listUsers)
	api.Register(a, api.Op{ID: "get-user", Method: http.MethodGet, Path: "/users/{id}", Tags: []string{"users"},
		Summary: "A single user", Access: api.Public, Scopes: readScopes}, s.getUser)
	api.Register(a, api.Op{ID: "create-user", Method: http.MethodPost, Path: "/users", Tags: []string{"users"},
		Summary: "Create a user (administrators)", Access: api.AdminOnly}, s.createUserOp)
	api.Register(a, api.Op{ID: "update-user", Method: http.MethodPut, Path: "/users/{id}", Tags: []string{"users"},
		Summary: "Modify a user (administrators)", Access: api.AdminOnly}, s.updateUser)
	api.Register(a, api.Op{ID: "delete-user", Method: http.MethodDelete, Path: "/users/{id}", Tags: []string{"users"},
		Summary: "Delete a user (administrators); 200 even when missing", Access: api.AdminOnly, Status: http.StatusOK}, s.deleteUser)
	api.Register(a, api.Op{ID: "block-user", Method: http.MethodPost, Path: "/users/{id}/block", Tags: []string{"users"},
		Summary: "Block a user (administrators)", Access: api.AdminOnly}, s.blockUser)
	api.Register(a, api.Op{ID: "unblock-user", Method: http.MethodPost, Path: "/users/{id}/unblock", Tags: []string{"users"},
		Summary: "Unblock a user (administrators)", Access: api.AdminOnly}, s.unblockUser)
}

// viewFor renders u as the caller may see it: full for administrators and
// the user themself, extended otherwise (single-user reads).
func viewFor(ctx context.Context, u *User) any {
	base := api.ExternalURLFrom(ctx)
	p := auth.FromContext(ctx)
	if p.IsAdmin() || p.UserID() == int64(u.ID) {
		v := fullView(base, u)
		return &v
	}
	v := extendedView(base, u)
	return &v
}

func (s *Service) listUsers(ctx context.Context, in *listUsersInput) (*listOutput, error) {
	admin := auth.FromContext(ctx).IsAdmin()
	base := api.ExternalURLFrom(ctx)
	match := func(u *User) bool {
		if in.Active && u.State != StateActive {
			return false
		}
		if in.Blocked && u.State == StateActive {
			return false
		}
		if in.External && !u.External {
			return false
		}
		if q := strings.ToLower(in.Search); q != "" &&
			!strings.Contains(strings.ToLower(u.Username), q) &&
			!strings.Contains(strings.ToLower(u.Name), q) &&
			!strings.Contains(strings.ToLower(u.Email), q) {
			return false
		}
		return true
	}
	var page []*User
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if in.Username != "" { // an exact lookup through the index
			u, err := users.GetBy(tx, "username", store.Fold(in.Username))
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if match(u) {
				total = 1
				page = api.Window([]*User{u}, in.PageParams)
			}
			return nil
		}
		filtered := in.Active || in.Blocked || in.External || in.Search != ""
		if !filtered { // no filter: the count is kept, and skipped rows are not decoded
			var err error
			page, total, err = users.Page(tx, false, in.Offset(), in.Limit())
			return err
		}
		off, lim := in.Offset(), in.Limit()
		return users.Scan(tx, false, 0, func(u *User) (bool, error) {
			if !match(u) {
				return true, nil
			}
			if total >= off && len(page) < lim {
				page = append(page, u)
			}
			total++
			return true, nil
		})
	})
	if err != nil {
		return nil, err
	}
	out := &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: make([]any, 0, len(page))}
	for _, u := range page {
		if admin {
			v := fullView(base, u)
			out.Body = append(out.Body, &v)
		} else {
			v := publicView(base, u)
			out.Body = append(out.Body, &v)
		}
	}
	return out, nil
}

func (s *Service) userByID(ctx context.Context, id int64) (*User, error) {
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		u, err = users.Get(tx, uint64(id))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || id <= 0 {
		return nil, api.NotFound("User")
	}
	return u, err
}

func (s *Service) getUser(ctx context.Context, in *UserIDPath) (*userOutput, error) {
	u, err := s.userByID(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return &userOutput{Body: viewFor(ctx, u)}, nil
}

// applyFields copies the given fields onto u and validates the result.
func applyFields(u *User, f *UserFields, now time.Time) {
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

func (s *Service) createUserOp(ctx context.Context, in *createUserInput) (*userOutput, error) {
	b := &in.Body
	if b.Password == nil && !b.ResetPassword {
		return nil, api.AtLeastOne("password", "reset_password")
	}
	now := s.now().UTC()
	u := &User{State: StateActive, ProjectsLimit: 100000, CanCreateGroup: true, ColorSchemeID: 1, CreatedAt: now, Identities: []Identity{}}
	b.UserFields.Email, b.UserFields.Username, b.UserFields.Name = &b.Email, &b.Username, &b.Name
	applyFields(u, &b.UserFields, now)
	if b.Confirm == nil || *b.Confirm {
		u.ConfirmedAt = &now
	}
	password := ""
	if b.ResetPassword {
		// The user gets a random password nobody knows; the UserCreated
		// event lets the notifications module mail a link to choose one
		// (PasswordResets).
		secret, err := newSecret()
		if err != nil {
			return nil, err
		}
		password, u.PasswordExpired = secret, true
	} else {
		password = *b.Password
	}
	if v := validateUser(u, password, true); v != nil {
		return nil, v
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return nil, err
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
		ev.ResetPassword = b.ResetPassword
		return s.bus.Publish(tx, ev)
	})
	if err != nil {
		return nil, conflictAsValidation(err)
	}
	v := fullView(api.ExternalURLFrom(ctx), u)
	return &userOutput{Body: &v}, nil
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

func (s *Service) updateUser(ctx context.Context, in *updateUserInput) (*userOutput, error) {
	// The hash is computed before the write: bcrypt takes tens of
	// milliseconds, and inside the transaction every other writer of the
	// group commit would wait for it. A password the validation refuses
	// wastes one hash, nothing more.
	var password string
	var hash []byte
	if in.Body.Password != nil {
		password = *in.Body.Password
		if passwordProblem(password) == "" { // otherwise the validation below refuses it
			var err error
			if hash, err = bcrypt.GenerateFromPassword([]byte(password), s.cost); err != nil {
				return nil, err
			}
		}
	}
	var out *User
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, uint64(in.ID))
		if errors.Is(err, store.ErrNotFound) {
			return api.NotFound("User")
		}
		if err != nil {
			return err
		}
		if in.Body.Admin != nil && !*in.Body.Admin {
			if err := keepsAnAdmin(tx, u, "demoted"); err != nil {
				return err
			}
		}
		applyFields(u, &in.Body, s.now())
		if v := validateUser(u, password, in.Body.Password != nil); v != nil {
			return v
		}
		if in.Body.Password != nil {
			u.PasswordHash = hash
			u.PasswordExpired = true // an admin-set password must be changed
		}
		if in.Body.Email != nil {
			if emailTaken(tx, u.Email, u.ID) {
				return conflictNotFound("Email has already been taken")
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
			r := []rune(conflict.Index)
			return conflictNotFound(strings.ToUpper(string(r[:1])) + string(r[1:]) + " has already been taken")
		}
		out = u
		return err
	})
	if err != nil {
		return nil, err
	}
	v := fullView(api.ExternalURLFrom(ctx), out)
	return &userOutput{Body: &v}, nil
}

// conflictNotFound: the spec has user modification report 404 even where a
// conflict would fit; the reason follows, as 403s carry theirs.
func conflictNotFound(reason string) error {
	return &api.Error{Status: http.StatusNotFound, Message: "404 Not Found - " + reason}
}

// maybeOutput is the answer of GitLab's idempotent deletes: the deleted
// record, or 200 with an empty body when there was nothing to delete.
type maybeOutput struct {
	Body any
}

func nothing() *maybeOutput { return &maybeOutput{Body: []byte{}} }

func (s *Service) deleteUser(ctx context.Context, in *UserIDPath) (*maybeOutput, error) {
	var deleted *User
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, uint64(in.ID))
		if errors.Is(err, store.ErrNotFound) {
			return nil // idempotent: 200 with no user
		}
		if err != nil {
			return err
		}
		if int64(u.ID) == auth.FromContext(ctx).UserID() {
			return api.Forbidden("you cannot delete yourself")
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
		return s.bus.Publish(tx, event.UserDeleted{UserID: int64(u.ID), Username: u.Username, Name: u.Name, Email: u.Email})
	})
	if err != nil {
		return nil, err
	}
	if deleted == nil {
		return nothing(), nil
	}
	v := fullView(api.ExternalURLFrom(ctx), deleted)
	return &maybeOutput{Body: &v}, nil
}

// deleteOwned removes a user's keys, e-mails and tokens (sessions included).
func deleteOwned(tx *store.Tx, userID uint64) error {
	key := strconv.FormatUint(userID, 10)
	if _, err := keys.DeleteBy(tx, "user", key); err != nil {
		return err
	}
	if _, err := emails.DeleteBy(tx, "user", key); err != nil {
		return err
	}
	_, err := tokens.DeleteBy(tx, "user", key)
	return err
}

type boolOutput struct {
	Body bool
}

// setState blocks or unblocks a user. The answer says whether the state
// changed: blocking a blocked user or unblocking an active one is a 201
// false, as GitLab's state machine answers a transition it cannot make.
func (s *Service) setState(ctx context.Context, id int64, block bool) (*boolOutput, error) {
	changed := false
	err := s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, uint64(id))
		if errors.Is(err, store.ErrNotFound) {
			return api.NotFound("User")
		}
		if err != nil {
			return err
		}
		if block && u.State == StateActive {
			if int64(u.ID) == auth.FromContext(ctx).UserID() {
				return api.Forbidden("you cannot block yourself")
			}
			if err := keepsAnAdmin(tx, u, "blocked"); err != nil {
				return err
			}
		}
		if u.State == StateLDAPBlocked {
			if block {
				return api.Forbidden("LDAP blocked users cannot be modified by the API")
			}
			return api.Forbidden("LDAP blocked users cannot be unblocked by the API")
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
		return nil, err
	}
	return &boolOutput{Body: changed}, nil
}

func (s *Service) blockUser(ctx context.Context, in *UserIDPath) (*boolOutput, error) {
	return s.setState(ctx, in.ID, true)
}

func (s *Service) unblockUser(ctx context.Context, in *UserIDPath) (*boolOutput, error) {
	return s.setState(ctx, in.ID, false)
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
// what is "block", "delete" or "demote" u, an active administrator.
func keepsAnAdmin(tx *store.Tx, u *User, what string) error {
	if !u.Admin || u.State != StateActive {
		return nil
	}
	n, err := otherActiveAdmins(tx, u.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return api.Forbidden("the last active administrator cannot be " + what)
	}
	return nil
}
