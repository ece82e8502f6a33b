package user

import "time"

// States of an account, as Account.State holds them.
const (
	StateActive      = "active"
	StateBlocked     = "blocked"      // by an administrator
	StateLDAPBlocked = "ldap_blocked" // by directory synchronisation
)

// PublicState is the state others are shown: a directory's block is a
// block like any other.
func PublicState(state string) string {
	if state == StateLDAPBlocked {
		return StateBlocked
	}
	return state
}

// Password lengths every path that sets a password enforces (the users
// API, the reset link, the admin command).
const (
	MinPasswordLength = 8
	// MaxPasswordLength: bcrypt ignores everything past 72 bytes, and a
	// password is refused rather than truncated.
	MaxPasswordLength = 72
)

// Identity links an account to an account of an external provider.
type Identity struct {
	Provider  string
	ExternUID string
}

// Account is a user's whole record as the Service returns it (never a
// password or a token). What a caller may be shown of it is the
// transport's choice: everything for the user themself and for
// administrators, less for others (Info, BasicUser).
type Account struct {
	ID       int64
	Username string
	Email    string
	Name     string
	// State is StateActive, StateBlocked or StateLDAPBlocked.
	State            string
	Admin            bool
	External         bool
	AvatarURL        string
	Bio              *string // nil when never set
	Location         *string // nil when never set
	Skype            string
	Linkedin         string
	Twitter          string
	WebsiteURL       string
	Organization     string
	ProjectsLimit    int
	CanCreateGroup   bool
	ColorSchemeID    int
	TwoFactorEnabled bool
	// PasswordExpired: an administrator set the password, and the user
	// should change it.
	PasswordExpired bool
	CreatedAt       time.Time
	ConfirmedAt     *time.Time
	LastSignInAt    *time.Time
	CurrentSignInAt *time.Time
	// LastActivityOn is a day (midnight UTC).
	LastActivityOn *time.Time
	Identities     []Identity
}

// Info is the account's summary, what other modules may know of a user.
func (a Account) Info() Info {
	return Info{ID: a.ID, Username: a.Username, Name: a.Name, Email: a.Email, State: PublicState(a.State),
		Admin: a.Admin, External: a.External, AvatarURL: a.AvatarURL, ProjectsLimit: a.ProjectsLimit, CreatedAt: a.CreatedAt}
}

// Fields are the profile of a create or an update; nil is "not given"
// (an update keeps what the account has). Strings are trimmed. Provider
// and ExternUID together link an external identity (replacing the
// account's identity of that provider).
type Fields struct {
	Email          *string
	Username       *string
	Name           *string
	Password       *string
	Skype          *string
	Linkedin       *string
	Twitter        *string
	WebsiteURL     *string
	Organization   *string
	Bio            *string
	Location       *string
	ProjectsLimit  *int
	ExternUID      *string
	Provider       *string
	Admin          *bool
	CanCreateGroup *bool
	External       *bool
}

// ProfileFields are what a user may change of their own account
// (Service.UpdateProfile); nil is "not given".
type ProfileFields struct {
	Name, Skype, Linkedin, Twitter, WebsiteURL, Organization, Bio, Location *string
}

// NewAccount is what an administrator's create gives: Fields with an
// Email, a Username and a Name, and a Password unless ResetPassword.
type NewAccount struct {
	Fields
	// ResetPassword gives the account a random password nobody knows,
	// which must be changed; UserCreated says so, and the notifications
	// module mails a link to choose one. It takes priority over Password.
	ResetPassword bool
	// Confirm marks the e-mail address confirmed; nil is true.
	Confirm *bool
}

// ListOptions narrow Service.Accounts; the zero value lists everyone.
type ListOptions struct {
	Active   bool   // only active accounts
	Blocked  bool   // only blocked ones (by an administrator or a directory)
	External bool   // only external users
	Admins   bool   // only administrators (the admin area's filter)
	Search   string // in the username, the name or the e-mail, case folded
	Username string // exactly this username, case folded
}

// ActiveDay is the last day a user was active (GET /user/activities).
type ActiveDay struct {
	Username string
	Day      time.Time // midnight UTC
}
