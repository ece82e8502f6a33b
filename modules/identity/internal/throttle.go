package internal

import (
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// Sign-in throttling: failed password attempts are counted per login and per
// client address, in memory (config sign_in_throttle). By default ten
// failures of one login lock it for ten minutes, as GitLab's Devise lockable
// did; an address gets more room (several people may share it behind NAT)
// before it is locked too. While locked, attempts are refused before the
// password is checked, so a right guess is refused as well and brute force
// learns nothing. Tokens are not throttled: they are not guessable, and they
// keep working for a user whose login an attacker has locked.

// throttleMaxEntries bounds each table (logins, addresses): about 100 bytes
// an entry, so a few MB at worst whatever the traffic.
const throttleMaxEntries = 50000

// loginUser checks a login and password under the sign-in throttle: a locked
// login or address is refused with *auth.ThrottledError before the password
// is looked at. The client's address comes from auth.ClientAddrFrom(ctx).
func (s *Service) loginUser(ctx context.Context, login, password string) (*User, error) {
	remote := auth.ClientAddrFrom(ctx)
	a, wait := s.throttle.begin(login, remote)
	if a == nil {
		return nil, &auth.ThrottledError{RetryAfter: wait}
	}
	u, err := s.verifyLogin(ctx, login, password)
	switch {
	case err == nil:
		s.throttle.succeeded(a)
	case errors.Is(err, auth.ErrInvalidPassword):
		if len(a.locked) > 0 {
			// Like GitLab's auth log, name the login: an administrator needs
			// to know which account is under attack. Bounded, as any input.
			if len(login) > 255 || !utf8.ValidString(login) {
				login = "(invalid)"
			}
			s.log.Warn("too many failed sign-ins; refusing further attempts for a while",
				zap.Strings("locked", a.locked), zap.String("login", login), zap.String("remote", remote),
				zap.Duration("for", s.throttle.window()))
		}
	default:
		s.throttle.notFailed(a)
	}
	return u, err
}

// throttleLimits are one table's rules.
type throttleLimits struct {
	// failures is the limit; 0 turns the table off.
	failures int
	// window is both how long failures are remembered and how long a lock
	// lasts from the failure that set it.
	window time.Duration
}

// throttleEntry counts failures in the window that began at start; until is
// set while locked.
type throttleEntry struct {
	start time.Time
	fails int
	until time.Time
}

func (e *throttleEntry) expired(now time.Time, window time.Duration) bool {
	if !e.until.IsZero() {
		return !now.Before(e.until)
	}
	return now.Sub(e.start) >= window
}

// throttleTable is the entries of one kind of key, bounded in number.
type throttleTable[K comparable] struct {
	limits  throttleLimits
	max     int
	entries map[K]*throttleEntry
	swept   time.Time
}

func newThrottleTable[K comparable](l throttleLimits, max int) *throttleTable[K] {
	return &throttleTable[K]{limits: l, max: max, entries: map[K]*throttleEntry{}}
}

// wait is how long k stays locked, 0 when it is not.
func (t *throttleTable[K]) wait(k K, now time.Time) time.Duration {
	e, ok := t.entries[k]
	if !ok || e.until.IsZero() || !now.Before(e.until) {
		return 0
	}
	return e.until.Sub(now)
}

// charge counts one failure for k in advance; it reports whether this
// failure locked k.
func (t *throttleTable[K]) charge(k K, now time.Time) bool {
	if t.limits.failures <= 0 {
		return false
	}
	e, ok := t.entries[k]
	if ok && e.expired(now, t.limits.window) {
		delete(t.entries, k)
		ok = false
	}
	if !ok {
		if !t.makeRoom(now) {
			return false // full of locked keys: this one goes uncounted
		}
		e = &throttleEntry{start: now}
		t.entries[k] = e
	}
	e.fails++
	if e.fails >= t.limits.failures && e.until.IsZero() {
		e.until = now.Add(t.limits.window)
		return true
	}
	return false
}

// refund takes back a charge: the attempt did not fail. reset forgets k's
// failures altogether (a right password for that login).
func (t *throttleTable[K]) refund(k K, reset bool) {
	e, ok := t.entries[k]
	if !ok {
		return
	}
	if reset {
		delete(t.entries, k)
		return
	}
	if e.fails > 0 {
		e.fails--
	}
	if e.fails < t.limits.failures {
		e.until = time.Time{}
	}
}

// makeRoom keeps the table under its bound: expired entries go first (and at
// least once per window anyway, so old ones do not linger), then unlocked
// ones in the map's random order, down to three quarters. Locked entries
// are kept, so flooding the table cannot lift a lock. It reports whether a
// new entry fits.
func (t *throttleTable[K]) makeRoom(now time.Time) bool {
	if len(t.entries) < t.max && now.Sub(t.swept) < t.limits.window {
		return true
	}
	t.swept = now
	for k, e := range t.entries {
		if e.expired(now, t.limits.window) {
			delete(t.entries, k)
		}
	}
	if len(t.entries) < t.max {
		return true
	}
	for k, e := range t.entries {
		if len(t.entries) <= t.max*3/4 {
			break
		}
		if e.until.IsZero() {
			delete(t.entries, k)
		}
	}
	return len(t.entries) < t.max
}

// throttle is the sign-in limiter of one server.
type throttle struct {
	mu     sync.Mutex
	now    func() time.Time
	logins *throttleTable[[32]byte]
	addrs  *throttleTable[netip.Addr]
}

func newThrottle(login, addr throttleLimits, max int) *throttle {
	return &throttle{
		now:    time.Now,
		logins: newThrottleTable[[32]byte](login, max),
		addrs:  newThrottleTable[netip.Addr](addr, max),
	}
}

// window is how long a lock lasts (the login table's, for the log).
func (t *throttle) window() time.Duration { return t.logins.limits.window }

// attempt is a charged sign-in attempt, settled once its outcome is known.
type attempt struct {
	login [32]byte
	// hasLogin is false for an attempt that names no login (a password
	// reset token): only its address is counted.
	hasLogin bool
	addr     netip.Addr
	hasAddr  bool
	// locked names what this attempt's charge locked ("login", "address"),
	// for the log.
	locked []string
}

// begin is called before a password is checked. When the login or the
// address is locked it returns how long; otherwise it counts the attempt as
// a failure in advance (so parallel guesses cannot overrun the limit while
// bcrypt runs) and returns it to be settled.
func (t *throttle) begin(login, remote string) (*attempt, time.Duration) {
	a := &attempt{login: throttleLoginKey(login), hasLogin: true}
	a.addr, a.hasAddr = throttleAddrKey(remote)
	return t.charge(a)
}

// beginAddress is begin for an attempt that names no login, a guess at a
// password reset token: the client's address is checked and charged, as a
// wrong password would charge it, so token guesses and password guesses
// share one allowance per address.
func (t *throttle) beginAddress(remote string) (*attempt, time.Duration) {
	a := &attempt{}
	a.addr, a.hasAddr = throttleAddrKey(remote)
	return t.charge(a)
}

func (t *throttle) charge(a *attempt) (*attempt, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var wait time.Duration
	if a.hasLogin {
		wait = t.logins.wait(a.login, now)
	}
	if a.hasAddr {
		wait = max(wait, t.addrs.wait(a.addr, now))
	}
	if wait > 0 {
		return nil, wait
	}
	if a.hasLogin && t.logins.charge(a.login, now) {
		a.locked = append(a.locked, "login")
	}
	if a.hasAddr && t.addrs.charge(a.addr, now) {
		a.locked = append(a.locked, "address")
	}
	return a, 0
}

// succeeded settles a right password: the charge is taken back and the
// login's earlier failures are forgotten. The address keeps its count, so a
// client cannot clear it by signing in to an account of its own between
// guesses at others.
func (t *throttle) succeeded(a *attempt) { t.settle(a, true) }

// notFailed settles an attempt that was no wrong password (a blocked
// account, a store error): the charge is taken back.
func (t *throttle) notFailed(a *attempt) { t.settle(a, false) }

func (t *throttle) settle(a *attempt, reset bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a.hasLogin {
		t.logins.refund(a.login, reset)
	}
	if a.hasAddr {
		t.addrs.refund(a.addr, false)
	}
}

// throttleLoginKey folds the login as lookups do and hashes it: keys have a
// fixed size whatever a client sends.
func throttleLoginKey(login string) [32]byte {
	return sha256.Sum256([]byte(store.Fold(login)))
}

// throttleAddrKey is the client's IP address; an IPv6 client is counted by
// its /64, which one subscriber usually holds whole.
func throttleAddrKey(remote string) (netip.Addr, bool) {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			ip = p.Addr()
		}
	}
	return ip, true
}
