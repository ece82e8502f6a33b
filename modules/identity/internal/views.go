package internal

import (
	"crypto/md5"
	"encoding/hex"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
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

func publicView(base string, u *User) PublicUser {
	return user.NewBasicUser(base, infoOf(u))
}

func extendedView(base string, u *User) ExtendedUser {
	return ExtendedUser{
		PublicUser: publicView(base, u),
		CreatedAt:  api.NewTime(u.CreatedAt),
		IsAdmin:    u.Admin,
		Bio:        u.Bio, Location: u.Location,
		Skype: u.Skype, Linkedin: u.Linkedin, Twitter: u.Twitter,
		WebsiteURL: u.WebsiteURL, Organization: u.Organization,
	}
}

func fullView(base string, u *User) FullUser {
	f := FullUser{
		ExtendedUser:     extendedView(base, u),
		Email:            u.Email,
		ColorSchemeID:    u.ColorSchemeID,
		ProjectsLimit:    u.ProjectsLimit,
		Identities:       make([]IdentityView, 0, len(u.Identities)),
		CanCreateGroup:   u.CanCreateGroup,
		CanCreateProject: u.ProjectsLimit > 0,
		TwoFactorEnabled: u.TwoFactorEnabled,
		External:         u.External,
		PasswordExpired:  u.PasswordExpired,
	}
	if u.LastSignInAt != nil {
		f.LastSignInAt = api.TimePtr(*u.LastSignInAt)
	}
	if u.ConfirmedAt != nil {
		f.ConfirmedAt = api.TimePtr(*u.ConfirmedAt)
	}
	if u.CurrentSignInAt != nil {
		f.CurrentSignInAt = api.TimePtr(*u.CurrentSignInAt)
	}
	if u.LastActivityOn != nil {
		f.LastActivityOn = api.DatePtr(*u.LastActivityOn)
	}
	for _, id := range u.Identities {
		f.Identities = append(f.Identities, IdentityView(id))
	}
	return f
}

// gravatar is the avatar URL of a user without an upload, as GitLab builds it.
func gravatar(email string) string {
	sum := md5.Sum([]byte(strings.ToLower(strings.TrimSpace(email))))
	return "https://www.gravatar.com/avatar/" + hex.EncodeToString(sum[:]) + "?s=80&d=identicon"
}
