package internal

// GitLab's JSON views of the service's records.

import (
	"context"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// PublicUser is the view anyone may see, the basic user every module embeds.
type PublicUser = user.BasicUser

// ExtendedUser is a single user as other users see it.
type ExtendedUser struct {
	PublicUser
	CreatedAt    api.Time `json:"created_at"`
	IsAdmin      bool     `json:"is_admin"`
	Bio          *string  `json:"bio"`
	Location     *string  `json:"location"`
	Skype        string   `json:"skype"`
	Linkedin     string   `json:"linkedin"`
	Twitter      string   `json:"twitter"`
	WebsiteURL   string   `json:"website_url"`
	Organization string   `json:"organization"`
}

// FullUser is what administrators and the user themself see.
type FullUser struct {
	ExtendedUser
	Email            string         `json:"email"`
	LastSignInAt     *api.Time      `json:"last_sign_in_at"`
	ConfirmedAt      *api.Time      `json:"confirmed_at"`
	CurrentSignInAt  *api.Time      `json:"current_sign_in_at"`
	LastActivityOn   *api.Date      `json:"last_activity_on"`
	ColorSchemeID    int            `json:"color_scheme_id"`
	ProjectsLimit    int            `json:"projects_limit"`
	Identities       []IdentityView `json:"identities"`
	CanCreateGroup   bool           `json:"can_create_group"`
	CanCreateProject bool           `json:"can_create_project"`
	TwoFactorEnabled bool           `json:"two_factor_enabled"`
	External         bool           `json:"external"`
	// PasswordExpired tells the client that an administrator set the
	// password and the user should change it (Fennec addition).
	PasswordExpired bool `json:"password_expired"`
}

// FullUserWithToken adds the private token of a session login and of an
// administrator's GET /user with sudo (currentUser); elsewhere PrivateToken
// is nil and omitted.
type FullUserWithToken struct {
	FullUser
	PrivateToken *string `json:"private_token,omitempty"`
}

// IdentityView is one external identity of a user.
type IdentityView struct {
	Provider  string `json:"provider"`
	ExternUID string `json:"extern_uid"`
}

func publicView(base string, a user.Account) PublicUser {
	return user.NewBasicUser(base, a.Info())
}

func extendedView(base string, a user.Account) ExtendedUser {
	return ExtendedUser{
		PublicUser: publicView(base, a),
		CreatedAt:  api.NewTime(a.CreatedAt),
		IsAdmin:    a.Admin,
		Bio:        a.Bio, Location: a.Location,
		Skype: a.Skype, Linkedin: a.Linkedin, Twitter: a.Twitter,
		WebsiteURL: a.WebsiteURL, Organization: a.Organization,
	}
}

func fullView(base string, a user.Account) FullUser {
	f := FullUser{
		ExtendedUser:     extendedView(base, a),
		Email:            a.Email,
		ColorSchemeID:    a.ColorSchemeID,
		ProjectsLimit:    a.ProjectsLimit,
		Identities:       make([]IdentityView, 0, len(a.Identities)),
		CanCreateGroup:   a.CanCreateGroup,
		CanCreateProject: a.ProjectsLimit > 0,
		TwoFactorEnabled: a.TwoFactorEnabled,
		External:         a.External,
		PasswordExpired:  a.PasswordExpired,
	}
	if a.LastSignInAt != nil {
		f.LastSignInAt = api.TimePtr(*a.LastSignInAt)
	}
	if a.ConfirmedAt != nil {
		f.ConfirmedAt = api.TimePtr(*a.ConfirmedAt)
	}
	if a.CurrentSignInAt != nil {
		f.CurrentSignInAt = api.TimePtr(*a.CurrentSignInAt)
	}
	if a.LastActivityOn != nil {
		f.LastActivityOn = api.DatePtr(*a.LastActivityOn)
	}
	for _, id := range a.Identities {
		f.Identities = append(f.Identities, IdentityView(id))
	}
	return f
}

// viewFor renders a as the caller may see it: full for administrators and
// the user themself, extended otherwise (single-user reads).
func viewFor(ctx context.Context, a user.Account) any {
	base := api.ExternalURLFrom(ctx)
	p := auth.FromContext(ctx)
	if p.IsAdmin() || p.UserID() == a.ID {
		v := fullView(base, a)
		return &v
	}
	v := extendedView(base, a)
	return &v
}

// KeyView is the SSH key resource.
type KeyView struct {
	ID        int64    `json:"id"`
	Title     string   `json:"title"`
	Key       string   `json:"key"`
	CreatedAt api.Time `json:"created_at"`
}

// KeyWithUser is GET /keys/:id: the key with its owner.
type KeyWithUser struct {
	KeyView
	User any `json:"user"`
}

func keyView(k user.Key) KeyView {
	return KeyView{ID: k.ID, Title: k.Title, Key: k.Key, CreatedAt: api.NewTime(k.CreatedAt)}
}

// EmailView is the e-mail resource.
type EmailView struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
}

func emailView(e user.Email) EmailView { return EmailView{ID: e.ID, Email: e.Email} }

// TokenView is the impersonation and personal access token resource. Token
// (the secret) is only present in the response that creates it: secrets are
// stored as hashes and cannot be shown again.
type TokenView struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	Revoked       bool      `json:"revoked"`
	CreatedAt     api.Time  `json:"created_at"`
	Scopes        []string  `json:"scopes"`
	UserID        int64     `json:"user_id"`
	Active        bool      `json:"active"`
	ExpiresAt     *api.Date `json:"expires_at"`
	Impersonation bool      `json:"impersonation"`
	Token         *string   `json:"token,omitempty"`
}

func tokenView(t user.Token) TokenView {
	v := TokenView{
		ID: t.ID, Name: t.Name, Revoked: t.Revoked, CreatedAt: api.NewTime(t.CreatedAt),
		Scopes: t.Scopes, UserID: t.UserID, Active: t.Active,
		Impersonation: t.Kind == user.ImpersonationToken,
	}
	if t.ExpiresAt != nil {
		v.ExpiresAt = api.DatePtr(*t.ExpiresAt)
	}
	if t.Secret != "" {
		secret := t.Secret
		v.Token = &secret
	}
	return v
}

// ActivityView is one entry of GET /user/activities.
type ActivityView struct {
	Username       string   `json:"username"`
	LastActivityOn api.Date `json:"last_activity_on"`
	// LastActivityAt is deprecated in favour of LastActivityOn; same value.
	LastActivityAt api.Date `json:"last_activity_at"`
}
