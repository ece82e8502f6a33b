package internal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/event"
	"github.com/fennec-forge/fennec/modules/identity/settings"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// Service implements identity's rules over the store.
type Service struct {
	db   *store.DB
	bus  *events.Bus
	log  *zap.Logger
	box  *sealed.Box // seals the users' private tokens (privatetoken.go)
	cost int
	cfg  Config // the module's section (the directory sync, the first administrator)
	// dummyHash is compared against when a login names nobody, so a wrong
	// username takes as long as a wrong password. It is made once, on
	// first use or by Run soon after start: one hash at the password cost
	// is most of a start's time otherwise.
	dummyHash func() []byte
	now       func() time.Time
	// Read caches for the per-request path: resolved tokens by SHA-256 and
	// decoded users by id. Every write goes through s.update, which
	// invalidates them all on commit, and tells the watchers (the HTTP
	// adapter's cache of rendered views).
	tokenCache *store.ReadCache[[32]byte, cachedToken]
	userCache  *store.ReadCache[int64, *User]
	watchMu    sync.RWMutex
	watchers   []func()
	activity   activityDays
	providers  []DirectoryProvider
	// throttle limits failed sign-ins (every password path goes through
	// loginUser).
	throttle *throttle
}

// Clock tells the time; tests supply one (identity.Clock) to move past a
// reset token's lifetime without waiting two days.
type Clock = settings.Clock

// WireDeps are what the service takes once the app is assembled: the
// auth providers (plugins and in-process ones) and, optionally, a clock.
type WireDeps struct {
	fennec.In
	Service   *Service
	Providers fennec.AuthProviders
	Clock     Clock `optional:"true"`
}

// Wire hands the service the auth providers, asked after the local
// password check in order, and the application's clock if it provides
// one. It runs while the application is assembled, before anything reads
// the time or signs in.
func Wire(d WireDeps) {
	list := make([]DirectoryProvider, 0, len(d.Providers))
	for _, p := range d.Providers {
		list = append(list, DirectoryProvider{Name: p.Name, Provider: p.Provider})
	}
	d.Service.SetProviders(list)
	if d.Clock != nil {
		d.Service.now = d.Clock.Now
	}
}

// cachedToken is a resolved token: the principal is shared between requests
// and must be treated as read-only.
type cachedToken struct {
	token     *Token
	principal *auth.Principal
}

// NewService builds the service.
func NewService(db *store.DB, bus *events.Bus, log *zap.Logger, box *sealed.Box, cfg Config) (*Service, error) {
	s := &Service{
		db: db, bus: bus, log: log, box: box, cfg: cfg, cost: cfg.PasswordCost, now: time.Now,
		tokenCache: store.NewReadCache[[32]byte, cachedToken](50000),
		userCache:  store.NewReadCache[int64, *User](50000),
		throttle: newThrottle(throttleLimits{cfg.SignInThrottle.LoginFailures, cfg.SignInThrottle.Window},
			throttleLimits{cfg.SignInThrottle.AddressFailures, cfg.SignInThrottle.Window}, throttleMaxEntries),
	}
	s.dummyHash = sync.OnceValue(func() []byte {
		// The settings hold the cost within bcrypt's bounds, and bcrypt
		// fails on nothing else for a password this short.
		h, _ := bcrypt.GenerateFromPassword([]byte("fennec-dummy-password"), s.cost)
		return h
	})
	db.OnSignal(identityChanged, func([]byte) { s.invalidate() })
	return s, nil
}

// ValidationError is the field -> texts error of the contract
// (user.ErrInvalid).
type ValidationError = user.InvalidError

var usernameRE = regexp.MustCompile(`^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$`)

// The password lengths of the contract.
const (
	MinPasswordLength = user.MinPasswordLength
	MaxPasswordLength = user.MaxPasswordLength
)

// passwordProblem is what is wrong with a new password (the text after
// "Password"), "" when nothing is. Every path that sets a password (the
// users API, the reset link, the admin command) applies it.
func passwordProblem(password string) string {
	switch n := len(password); {
	case n < MinPasswordLength:
		return fmt.Sprintf("is too short (minimum is %d characters)", MinPasswordLength)
	case n > MaxPasswordLength:
		return fmt.Sprintf("is too long (maximum is %d characters)", MaxPasswordLength)
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func validateUser(u *User, password string, requirePassword bool) ValidationError {
	v := ValidationError{}
	switch {
	case u.Username == "":
		v.Add("username", "can't be blank")
	case len(u.Username) > 255:
		v.Add("username", "is too long (maximum is 255 characters)")
	case !usernameRE.MatchString(u.Username) || strings.HasSuffix(u.Username, ".") ||
		strings.HasSuffix(u.Username, ".git") || strings.HasSuffix(u.Username, ".atom"):
		v.Add("username", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.")
	case ReservedNamespace(u.Username):
		v.Add("username", reservedName(u.Username))
	}
	if u.Name == "" {
		v.Add("name", "can't be blank")
	}
	for field, value := range map[string]string{"name": u.Name, "skype": u.Skype, "linkedin": u.Linkedin,
		"twitter": u.Twitter, "website_url": u.WebsiteURL, "organization": u.Organization,
		"bio": deref(u.Bio), "location": deref(u.Location)} {
		if utf8.RuneCountInString(value) > 255 {
			v.Add(field, "is too long (maximum is 255 characters)")
		}
	}
	if u.ProjectsLimit < 0 {
		v.Add("projects_limit", "must be greater than or equal to 0")
	}
	if u.Email == "" {
		v.Add("email", "can't be blank")
	} else if !validEmail(u.Email) {
		v.Add("email", "is invalid")
	}
	if requirePassword || password != "" {
		if text := passwordProblem(password); text != "" {
			v.Add("password", text)
		}
	}
	if len(v) == 0 {
		return nil
	}
	return v
}

// CreateUser implements auth.Provisioner.
func (s *Service) CreateUser(ctx context.Context, nu auth.NewUser) (*auth.User, error) {
	u, err := s.createUser(ctx, nu)
	if err != nil {
		return nil, err
	}
	return summary(u), nil
}

func (s *Service) createUser(ctx context.Context, nu auth.NewUser) (*User, error) {
	now := s.now().UTC()
	u := &User{
		Username: nu.Username, Email: nu.Email, Name: nu.Name,
		Admin: nu.Admin, External: nu.External, State: "active",
		ProjectsLimit: 100000, CanCreateGroup: true, ColorSchemeID: 1,
		CreatedAt: now, ConfirmedAt: &now, Identities: []Identity{},
	}
	if v := validateUser(u, nu.Password, true); v != nil {
		return nil, v
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(nu.Password), s.cost)
	if err != nil {
		return nil, err
	}
	u.PasswordHash = hash
	err = s.update(ctx, func(tx *store.Tx) error {
		if err := users.Insert(tx, u); err != nil {
			return err
		}
		return s.bus.Publish(tx, userCreated(u))
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return nil, ValidationError{conflict.Index: {"has already been taken"}}
	}
	return u, err
}

// CreateToken implements auth.Provisioner: a personal access token.
func (s *Service) CreateToken(ctx context.Context, userID int64, name string, scopes []string) (string, error) {
	var secret string
	err := s.update(ctx, func(tx *store.Tx) error {
		if !users.Exists(tx, userID) {
			return auth.ErrUserNotFound
		}
		var err error
		secret, err = s.insertToken(tx, userID, KindPersonal, name, scopes)
		return err
	})
	return secret, err
}

// insertToken stores a new token and returns its secret.
func (s *Service) insertToken(tx *store.Tx, userID int64, kind, name string, scopes []string) (string, error) {
	secret, err := newSecret()
	if err != nil {
		return "", err
	}
	if scopes == nil {
		scopes = []string{auth.ScopeAPI}
	}
	t := &Token{UserID: userID, Kind: kind, Name: name, Hash: hashToken(secret), Scopes: scopes, CreatedAt: s.now().UTC()}
	return secret, tokens.Insert(tx, t)
}

// tokenAlphabet matches the look of GitLab's 20-character private tokens.
const tokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func newSecret() (string, error) {
	// 20 characters from 62 carry ~119 bits; rejection sampling keeps it uniform.
	out := make([]byte, 0, 20)
	buf := make([]byte, 32)
	for len(out) < 20 {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < 248 && len(out) < 20 { // 248 = 4*62
				out = append(out, tokenAlphabet[int(b)%62])
			}
		}
	}
	return string(out), nil
}

func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// update runs fn in a write transaction and invalidates the read cache when
// it commits. Every identity write must go through it.
func (s *Service) update(ctx context.Context, fn func(*store.Tx) error) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.Signal(identityChanged, nil); err != nil {
			return err
		}
		return fn(tx)
	})
}

// identityChanged is the signal of a committed identity write: every
// node (store.Tx.Signal) drops its caches of users and tokens, so a
// blocked user or a revoked token is refused everywhere within a poll.
const identityChanged = "identity.changed"

func (s *Service) invalidate() {
	s.tokenCache.Invalidate()
	s.userCache.Invalidate()
	s.watchMu.RLock()
	defer s.watchMu.RUnlock()
	for _, fn := range s.watchers {
		fn()
	}
}

// watch has fn called after every identity commit, for a cache of what
// the service answered (the HTTP adapter's rendered views).
func (s *Service) watch(fn func()) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	s.watchers = append(s.watchers, fn)
}

// ResolveToken implements auth.TokenResolver for private, personal and
// impersonation tokens (also when sent as a git password). It runs on every
// authenticated request: one SHA-256, then the read cache or one read
// transaction; never a scan, never a write.
func (s *Service) ResolveToken(ctx context.Context, kind auth.TokenKind, secret string) (*auth.Principal, error) {
	if kind == auth.KindOAuth || kind == auth.KindSession {
		// A session cookie is never one of these tokens: a token pasted
		// into the cookie must not authenticate as one.
		return nil, auth.ErrUnknownToken
	}
	sum := sha256.Sum256([]byte(secret))
	ct, ok := s.tokenCache.Get(sum)
	if !ok {
		var err error
		if ct, err = s.loadToken(ctx, sum); err != nil {
			return nil, err
		}
	}
	if !ct.token.Active(s.now()) {
		return nil, auth.ErrUnauthorized
	}
	return ct.principal, nil
}

// loadToken reads a token and its user and caches the resolved principal.
func (s *Service) loadToken(ctx context.Context, sum [32]byte) (cachedToken, error) {
	gen := s.tokenCache.Gen()
	var t *Token
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		t, err = tokens.GetBy(tx, "hash", hex.EncodeToString(sum[:]))
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUnknownToken
		}
		if err != nil {
			return err
		}
		u, err = users.Get(tx, t.UserID)
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUnauthorized
		}
		return err
	})
	if err != nil {
		return cachedToken{}, err
	}
	method := auth.MethodPrivateToken
	switch t.Kind {
	case KindPersonal:
		method = auth.MethodPersonal
	case KindImpersonation:
		method = auth.MethodImpersonation
	}
	var scopes []string
	if t.Kind != KindPrivate {
		scopes = t.Scopes
	}
	ct := cachedToken{token: t, principal: &auth.Principal{User: summary(u), Method: method, Scopes: scopes, TokenID: t.ID}}
	s.tokenCache.Put(gen, sum, ct)
	return ct, nil
}

// cachedUser loads a user for reading (never modify the result).
func (s *Service) cachedUser(ctx context.Context, id int64) (*User, error) {
	if u, ok := s.userCache.Get(id); ok {
		return u, nil
	}
	gen := s.userCache.Gen()
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		u, err = users.Get(tx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, auth.ErrUserNotFound
	}
	if err != nil {
		return nil, err
	}
	s.userCache.Put(gen, id, u)
	return u, nil
}

// AuthenticatePassword implements auth.PasswordAuthenticator: login is a
// username or an e-mail address. It may refuse with *auth.ThrottledError.
func (s *Service) AuthenticatePassword(ctx context.Context, login, password string) (*auth.User, error) {
	u, err := s.loginUser(ctx, login, password)
	if err != nil {
		return nil, err
	}
	return summary(u), nil
}

func (s *Service) checkPassword(ctx context.Context, login, password string) (*User, error) {
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		u, err = s.findLogin(tx, login)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return nil, auth.ErrInvalidPassword
	}
	if err != nil {
		return nil, err
	}
	if len(u.PasswordHash) == 0 || bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(password)) != nil {
		return nil, auth.ErrInvalidPassword
	}
	if u.State != "active" {
		return nil, auth.ErrUnauthorized
	}
	return u, nil
}

func (s *Service) findLogin(tx *store.Tx, login string) (*User, error) {
	key := store.Fold(login)
	if key == "" {
		return nil, store.ErrNotFound
	}
	if strings.Contains(key, "@") {
		if u, err := users.GetBy(tx, "email", key); err == nil {
			return u, nil
		}
	}
	return users.GetBy(tx, "username", key)
}

// Login implements user.Service: it checks a password and records the
// sign-in; it returns the account and the user's private token (made on
// the first login: every login returns the same one, as GitLab 9.x's did,
// until it is reset).
func (s *Service) Login(ctx context.Context, login, password string) (user.Account, string, error) {
	u, err := s.loginUser(ctx, login, password)
	if err != nil {
		return user.Account{}, "", err
	}
	var secret string
	err = s.update(ctx, func(tx *store.Tx) error {
		cur, err := users.Get(tx, u.ID)
		if err != nil {
			return err
		}
		now := s.now().UTC()
		cur.LastSignInAt = cur.CurrentSignInAt
		if cur.LastSignInAt == nil {
			cur.LastSignInAt = &now
		}
		cur.CurrentSignInAt = &now
		day := now.Truncate(24 * time.Hour)
		cur.LastActivityOn = &day
		if err := users.Update(tx, cur); err != nil {
			return err
		}
		u = cur
		secret, err = s.userPrivateToken(tx, cur.ID)
		return err
	})
	if err != nil {
		return user.Account{}, "", err
	}
	return accountOf(u), secret, nil
}

// LookupUser implements auth.UserLookup (sudo): by id or username.
func (s *Service) LookupUser(ctx context.Context, ref string) (*auth.User, error) {
	u, err := s.findUser(ctx, ref)
	if err != nil {
		return nil, err
	}
	return summary(u), nil
}

func (s *Service) findUser(ctx context.Context, ref string) (*User, error) {
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if id, name := auth.ParseUserRef(ref); id > 0 {
			u, err = users.Get(tx, id)
		} else {
			u, err = users.GetBy(tx, "username", store.Fold(name))
		}
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, auth.ErrUserNotFound
	}
	return u, err
}

func summary(u *User) *auth.User {
	return &auth.User{
		ID: u.ID, Username: u.Username, Admin: u.Admin,
		Blocked: u.State != "active", External: u.External,
	}
}

// RootUsername and RootEmail name the administrator made on first start.
const (
	RootUsername = "root"
	RootEmail    = "admin@example.com"
)

var _ fennec.Provisioner = (*Service)(nil)

// Provision creates the administrator when the store has no users yet,
// with the configured password or a generated one that is printed once.
func (s *Service) Provision(ctx context.Context) error {
	empty := false
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		empty = users.Count(tx) == 0
		return nil
	}); err != nil || !empty {
		return err
	}
	password, generated := s.cfg.RootPassword, false
	if password == "" {
		secret, err := newSecret()
		if err != nil {
			return err
		}
		password, generated = secret, true
	}
	_, err := s.createUser(ctx, auth.NewUser{
		Username: RootUsername, Email: RootEmail, Name: "Administrator",
		Password: password, Admin: true,
	})
	if err != nil {
		return fmt.Errorf("identity: create administrator: %w", err)
	}
	if generated {
		s.log.Warn("created the administrator; this password is shown only once",
			zap.String("login", RootUsername), zap.String("password", password))
	} else {
		s.log.Info("created the administrator with the password from FENNEC_ROOT_PASSWORD",
			zap.String("login", RootUsername))
	}
	return nil
}

// interface guards
var (
	_ auth.TokenResolver         = (*Service)(nil)
	_ auth.PasswordAuthenticator = (*Service)(nil)
	_ auth.UserLookup            = (*Service)(nil)
	_ auth.Provisioner           = (*Service)(nil)
)

// userCreated is the event of u's creation, published with its insert.
func userCreated(u *User) event.UserCreated {
	return event.UserCreated{UserID: u.ID, Username: u.Username, Name: u.Name, Email: u.Email}
}

// userBlocked is the event of u's block, with the state it now has.
func userBlocked(u *User) event.UserBlocked {
	return event.UserBlocked{UserID: u.ID, Username: u.Username, State: u.State}
}
