package settings

// The identity module's settings: the "identity" section of the
// configuration (fennec.ModuleConfig). Their keys were top-level before
// sections, and still work there (toplevel), as do the old variable names.

import (
	"errors"
	"time"
)

// SectionName is the name of the module's configuration section.
const SectionName = "identity"

// Config is the identity module's section ("identity": root_password,
// password_cost, directory_sync_interval, sign_in_throttle).
type Config struct {
	// RootPassword is the password of the administrator created on first
	// start. Empty: a random one is generated and printed once.
	RootPassword string `yaml:"root_password" env:"FENNEC_ROOT_PASSWORD" toplevel:"true" default:"generated" help:"password of root, used on the first start only"`
	// PasswordCost is the bcrypt cost for new password hashes (4-31).
	// Test harnesses lower it; production should not.
	PasswordCost int `yaml:"password_cost" toplevel:"true" help:"bcrypt cost of new password hashes (4 to 31)"`
	// DirectorySyncInterval is how often users of external auth providers
	// (LDAP) are checked against the directory; those who left are blocked.
	// The first check runs after one interval or one minute, whichever is
	// shorter.
	DirectorySyncInterval time.Duration `yaml:"directory_sync_interval" toplevel:"true" help:"how often users of an auth provider (LDAP) are checked against the directory"`
	// SignInThrottle limits failed password attempts (POST /session, basic
	// auth on the API and git).
	SignInThrottle SignInThrottle `yaml:"sign_in_throttle" toplevel:"true"`
}

// SignInThrottle: after LoginFailures failed attempts for one login, or
// AddressFailures from one client address (an IPv6 /64), within Window,
// further attempts are refused (429) without checking the password until
// Window has passed since the failure that set the lock. 0 turns a limit
// off (for instance AddressFailures behind a reverse proxy, where every
// client has the proxy's address).
type SignInThrottle struct {
	LoginFailures   int           `yaml:"login_failures" help:"failed password attempts (POST /session, basic auth) per login before further attempts get 429 for the window; 0: no limit"`
	AddressFailures int           `yaml:"address_failures" help:"the same per client address (IPv6 /64); 0 behind a reverse proxy"`
	Window          time.Duration `yaml:"window" help:"how long failures count and a lock lasts"`
}

// Default is the section with nothing set.
func Default() Config {
	return Config{
		PasswordCost:          10,
		DirectorySyncInterval: time.Hour,
		// GitLab locked an account for 10 minutes after 10 failures.
		SignInThrottle: SignInThrottle{LoginFailures: 10, AddressFailures: 50, Window: 10 * time.Minute},
	}
}

// Validate refuses values that would fail late or obscurely.
func (c Config) Validate() error {
	if c.DirectorySyncInterval <= 0 {
		return errors.New("config: identity.directory_sync_interval must be positive")
	}
	if c.PasswordCost < 4 || c.PasswordCost > 31 {
		return errors.New("config: identity.password_cost must be between 4 and 31")
	}
	if t := c.SignInThrottle; t.LoginFailures < 0 || t.AddressFailures < 0 || t.Window <= 0 {
		return errors.New("config: identity.sign_in_throttle needs login_failures and address_failures of 0 or more and a positive window")
	}
	return nil
}

// Clock tells the module the time. The module uses the wall clock unless
// the application provides one (tests move past a reset token's lifetime
// with it):
//
//	fx.Supply(fx.Annotate(myClock, fx.As(new(identity.Clock))))
type Clock interface{ Now() time.Time }
