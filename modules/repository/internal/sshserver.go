package internal

// The SSH server for git: `git clone git@host:namespace/project.git` with
// the SSH keys users manage through the API. It runs when ssh_listen is
// set, beside the HTTP server, and serves the same engine under the same
// rules as smart HTTP (Git): projects.Access decides who may read or
// push, Git.push does the push (protection, quarantine, atomic refs,
// push events), gitserve speaks the protocol (ServeUploadPack, the
// session form of the HTTP functions).
//
// Authentication is by public key only, as user "git": the key's owner is
// looked up in the identity module on every connection (and again for
// every command, so a key deleted or a user blocked while a connection is
// open stops its next command). Only "session" channels with one "exec"
// of git-upload-pack or git-receive-pack run anything; a shell, other
// commands, subsystems, ptys, forwarding of ports, agents or X11 are
// refused, with a message on stderr and exit status 1 where the client
// waits for one.
//
// Connections are counted in two kinds. One that has not authenticated
// yet takes a place under ssh_max_startups, as OpenSSH's MaxStartups: at
// most ssh_max_startups_per_address of them from one address (one /64 for
// IPv6), and from start on in total a new one is dropped at random, with
// a probability rising from rate to 100% at full; it has
// ssh_handshake_timeout to authenticate. Once authenticated it gives its
// place back and counts under ssh_max_sessions instead. So idle TCP
// connections, which cost a flood nothing, hold only places of their own
// kind, a few per address and briefly, and a key holder still gets in.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/crypto/ssh"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	fconfig "github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// SSHServer serves git over SSH.
type SSHServer struct {
	git      *Git
	keys     identity.SSHKeys
	endpoint projects.SSHEndpoint
	cfg      Config
	blobs    blob.Store
	log      *zap.Logger

	config   *ssh.ServerConfig
	hostKeys []ssh.PublicKey
	ln       net.Listener
	ctx      context.Context // cancelled at stop
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	startups startups        // ssh_max_startups, read
	chance   func(n int) int // a random number in [0, n): the early drop's draw
	// Commands running (under mu): stop waits for them, and once stopping
	// is set no new one starts.
	active   int
	stopping bool
	// stopWithin bounds the drain at stop (the app's shutdown timeout).
	stopWithin time.Duration
	drained    chan struct{} // closed when active drops to 0 while stopping
	mu         sync.Mutex
	perUser    map[int64]int // running commands per user
	open       map[net.Conn]struct{}
	// Connections not yet authenticated, in all and per source (under
	// mu), and authenticated ones, for ssh_max_sessions.
	unauth    int
	perSource map[string]int
	authed    int
	// Connections dropped since the last warning about it, and when that
	// was (unix nanoseconds): a flood logs a line every dropLogEvery, not
	// one per connection.
	dropped     atomic.Int64
	lastDropLog atomic.Int64
}

// dropLogEvery is the least time between two warnings about dropped
// connections.
const dropLogEvery = 10 * time.Second

// NewSSHServer builds the SSH server; when ssh_listen is set, it listens
// at start (Provision) and stops with the app (Run).
func NewSSHServer(g *Git, keys identity.SSHKeys, endpoint projects.SSHEndpoint,
	cfg Config, fcfg fconfig.Config, blobs blob.Store, log *zap.Logger) *SSHServer {
	s := &SSHServer{git: g, keys: keys, endpoint: endpoint, cfg: cfg, blobs: blobs, log: log.Named("ssh"),
		perUser: map[int64]int{}, open: map[net.Conn]struct{}{}, perSource: map[string]int{}, chance: mrand.IntN,
		stopWithin: fcfg.ShutdownTimeout}
	if cfg.SSHListen == "" {
		return s
	}
	s.startups, _ = parseStartups(cfg.SSHMaxStartups) // validated with the configuration
	return s
}

var (
	_ fennec.Provisioner = (*SSHServer)(nil)
	_ fennec.Runner      = (*SSHServer)(nil)
	_ fennec.EveryNode   = (*SSHServer)(nil)
)

// EveryNode: every node of several sharing a store listens for SSH.
func (s *SSHServer) EveryNode() {}

// Provision listens on ssh_listen (nothing when it is not set), so git over
// SSH answers once the app has started.
func (s *SSHServer) Provision(ctx context.Context) error {
	if s.cfg.SSHListen == "" {
		return nil
	}
	return s.start(ctx)
}

// Run waits for the app to stop, then closes the listener, lets running
// commands finish within the shutdown timeout and closes what is left.
func (s *SSHServer) Run(ctx context.Context) error {
	if s.ln == nil {
		return nil
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), max(s.stopWithin, time.Second))
	defer cancel()
	return s.stop(stop)
}

// Addr is the address the server listens on ("" when off).
func (s *SSHServer) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// HostKeys are the server's public host keys (none when off).
func (s *SSHServer) HostKeys() []ssh.PublicKey {
	if s.config == nil {
		return nil
	}
	return s.hostKeys
}

func (s *SSHServer) start(ctx context.Context) error {
	signers, err := loadHostKeys(ctx, s.blobs, s.log)
	if err != nil {
		return err
	}
	conf := &ssh.ServerConfig{
		PublicKeyCallback: s.checkKey,
		MaxAuthTries:      s.cfg.SSHMaxAuthTries,
		ServerVersion:     "SSH-2.0-Fennec",
	}
	for _, k := range signers {
		conf.AddHostKey(k)
		s.hostKeys = append(s.hostKeys, k.PublicKey())
	}
	ln, err := net.Listen("tcp", s.cfg.SSHListen)
	if err != nil {
		return fmt.Errorf("ssh: listen on %s: %w", s.cfg.SSHListen, err)
	}
	s.config, s.ln = conf, ln
	s.ctx, s.cancel = context.WithCancel(context.Background())
	host, port := s.external()
	s.endpoint.SetSSHEndpoint(host, port)
	s.wg.Add(1)
	go s.accept()
	s.log.Info("serving git over ssh", zap.String("addr", ln.Addr().String()), zap.String("external_host", host), zap.Int("external_port", port))
	return nil
}

// external is where clients reach the server: ssh_external, else the
// listen address ("" for the host when listening on every address).
func (s *SSHServer) external() (string, int) {
	if s.cfg.SSHExternal != "" {
		host, port, _ := splitExternal(s.cfg.SSHExternal)
		return host, port
	}
	addr := s.ln.Addr().(*net.TCPAddr)
	host := ""
	if !addr.IP.IsUnspecified() {
		host = addr.IP.String()
	}
	return host, addr.Port
}

// stop lets the commands running finish (a push half done is not cut),
// within the stop's deadline, then closes every connection.
func (s *SSHServer) stop(ctx context.Context) error {
	_ = s.ln.Close()
	s.mu.Lock()
	s.stopping = true
	drained := make(chan struct{})
	if s.active == 0 {
		close(drained)
	} else {
		s.drained = drained
	}
	s.mu.Unlock()
	select {
	case <-drained:
	case <-ctx.Done():
	}
	s.cancel()
	s.mu.Lock()
	for c := range s.open {
		_ = c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("ssh: sessions still running at stop")
	}
}

func (s *SSHServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return // closed
		}
		source := sourceOf(c.RemoteAddr())
		if why := s.admit(source); why != "" {
			_ = c.Close()
			s.droppedOne(why)
			continue
		}
		s.mu.Lock()
		s.open[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.open, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			s.serveConn(c, source)
		}()
	}
}

// sourceOf is what ssh_max_startups_per_address counts by: the client's
// address, or its /64 for IPv6, where one host commonly has a whole /64.
func sourceOf(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return ta.IP.String()
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// admit takes a place for a new connection not yet authenticated from
// source, or says why it is dropped: its source holds all of its places,
// or ssh_max_startups drops it (at random between start and full).
func (s *SSHServer) admit(source string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.startups
	switch {
	case s.perSource[source] >= s.cfg.SSHMaxStartupsPerAddress:
		return "too many connections not yet authenticated from one address (ssh_max_startups_per_address)"
	case s.unauth >= st.full:
		return "too many connections not yet authenticated (ssh_max_startups)"
	case s.unauth >= st.start:
		// OpenSSH's early drop: rate% at start, rising linearly to 100%
		// at full.
		p := st.rate
		if st.full > st.start {
			p += (100 - st.rate) * (s.unauth - st.start) / (st.full - st.start)
		}
		if s.chance(100) < p {
			return "too many connections not yet authenticated (ssh_max_startups, dropped at random)"
		}
	}
	s.unauth++
	s.perSource[source]++
	return ""
}

// authenticated gives back the place admit took; the connection, if it
// authenticated (ok), then takes one under ssh_max_sessions, which it gets
// unless they are all taken (false).
func (s *SSHServer) authenticated(source string, ok bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unauth--
	if s.perSource[source]--; s.perSource[source] <= 0 {
		delete(s.perSource, source)
	}
	if !ok || s.authed >= s.cfg.SSHMaxSessions {
		return false
	}
	s.authed++
	return true
}

func (s *SSHServer) closedSession() {
	s.mu.Lock()
	s.authed--
	s.mu.Unlock()
}

// droppedOne counts a connection dropped before its handshake and warns,
// at most every dropLogEvery, with how many were since the last warning.
func (s *SSHServer) droppedOne(why string) {
	n := s.dropped.Add(1)
	now := time.Now().UnixNano()
	last := s.lastDropLog.Load()
	if now-last < int64(dropLogEvery) || !s.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	s.dropped.Add(-n)
	s.log.Warn("ssh: connections dropped before authenticating", zap.Int64("dropped", n), zap.String("last_reason", why))
}

// permKey is where checkKey leaves the authenticated key (its wire form)
// for the connection's commands.
const permKey = "fennec-key"

// checkKey is the public key callback: user git and a key some user has.
// A blocked owner is let in and refused every command with a message
// (sshexec.go): refusing here would tell anyone holding the public key
// alone, before any signature, that its owner is blocked. The library
// keeps the permissions of the key whose signature it verified.
func (s *SSHServer) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if meta.User() != "git" {
		return nil, &ssh.BannerError{Err: errors.New("ssh: user is not git"),
			Message: "Fennec serves git as the user git (git@host:namespace/project.git).\n"}
	}
	_, err := s.keys.SSHKeyOwner(s.ctx, key.Marshal())
	if err != nil {
		if !errors.Is(err, identity.ErrKeyNotFound) {
			s.log.Error("ssh: key lookup", zap.Error(err))
		}
		return nil, errors.New("ssh: unknown key")
	}
	return &ssh.Permissions{Extensions: map[string]string{permKey: string(key.Marshal())}}, nil
}

const msgBlocked = "Your account has been blocked."

// idleConn closes itself when no byte went either way for a while.
type idleConn struct {
	net.Conn
	last atomic.Int64 // unix nanoseconds of the last read or write
}

func (c *idleConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *idleConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.last.Store(time.Now().UnixNano())
	}
	return n, err
}

// watch closes the connection once it has been idle for d, until done.
func (c *idleConn) watch(d time.Duration, done <-chan struct{}) {
	tick := time.NewTicker(min(d/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if now.Sub(time.Unix(0, c.last.Load())) > d {
				_ = c.Conn.Close()
				return
			}
		}
	}
}

// msgTooMany refuses the session of a connection that authenticated while
// ssh_max_sessions were all taken.
const msgTooMany = "Too many SSH connections to Fennec right now; try again later."

func (s *SSHServer) serveConn(nc net.Conn, source string) {
	ic := &idleConn{Conn: nc}
	ic.last.Store(time.Now().UnixNano())
	// The pre-authentication deadline: key exchange and authentication,
	// however slowly the bytes come.
	_ = nc.SetDeadline(time.Now().Add(s.cfg.SSHHandshakeTimeout))
	conn, chans, reqs, err := ssh.NewServerConn(ic, s.config)
	if !s.authenticated(source, err == nil) {
		if err != nil {
			s.log.Debug("ssh: handshake", zap.String("remote", nc.RemoteAddr().String()), zap.Error(err))
			return
		}
		defer conn.Close()
		s.log.Warn("ssh: too many connections, an authenticated one refused", zap.String("remote", nc.RemoteAddr().String()),
			zap.Int("limit", s.cfg.SSHMaxSessions))
		// Say why to the client's first channel, then close.
		go ssh.DiscardRequests(reqs)
		select {
		case nch, ok := <-chans:
			if ok {
				_ = nch.Reject(ssh.ResourceShortage, msgTooMany)
			}
		case <-time.After(s.cfg.SSHHandshakeTimeout):
		}
		return
	}
	defer s.closedSession()
	defer conn.Close()
	_ = nc.SetDeadline(time.Time{})
	done := make(chan struct{})
	defer close(done)
	go ic.watch(s.cfg.SSHIdleTimeout, done)

	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	// Global requests (tcpip-forward, keepalives) get "no".
	go ssh.DiscardRequests(reqs)
	var sessions sync.WaitGroup
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.Prohibited, "Fennec serves git only: port forwarding and other channels are not allowed")
			continue
		}
		ch, chReqs, err := nch.Accept()
		if err != nil {
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			s.session(ctx, conn, ch, chReqs)
		}()
	}
	cancel()
	sessions.Wait()
}

// maxGitProtocol bounds the GIT_PROTOCOL value kept from an env request.
const maxGitProtocol = 256

// session handles one session channel: GIT_PROTOCOL from "env", then one
// "exec", "shell" or "subsystem"; every other request is refused.
func (s *SSHServer) session(ctx context.Context, conn *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	gitProtocol := ""
	var running chan struct{}
	for req := range reqs {
		if running != nil {
			reply(req, false) // one command per channel
			continue
		}
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL" && len(kv.Value) <= maxGitProtocol
			if ok {
				gitProtocol = kv.Value
			}
			reply(req, ok)
		case "exec":
			var cmd struct{ Command string }
			if ssh.Unmarshal(req.Payload, &cmd) != nil {
				reply(req, false)
				continue
			}
			reply(req, true)
			running = make(chan struct{})
			go func() {
				defer close(running)
				status := s.exec(ctx, conn, ch, cmd.Command, gitProtocol)
				exit(ch, status)
			}()
		case "shell":
			reply(req, true)
			running = make(chan struct{})
			close(running)
			owner, err := s.keys.SSHKeyOwner(ctx, []byte(conn.Permissions.Extensions[permKey]))
			switch {
			case err != nil:
				fmt.Fprintln(ch.Stderr(), msgSSHKeyGone)
			case owner.User.Blocked:
				fmt.Fprintln(ch.Stderr(), msgBlocked)
			default:
				fmt.Fprintf(ch.Stderr(), "Hi @%s! You've successfully authenticated, but Fennec does not provide shell access.\n", owner.User.Username)
			}
			exit(ch, 1)
		case "subsystem":
			reply(req, true)
			running = make(chan struct{})
			close(running)
			fmt.Fprintln(ch.Stderr(), "Fennec serves git only: subsystems (sftp and others) are not available.")
			exit(ch, 1)
		default:
			// pty-req, x11-req, auth-agent-req@openssh.com, signal...
			reply(req, false)
		}
	}
	if running != nil {
		<-running
	}
}

func reply(req *ssh.Request, ok bool) {
	if req.WantReply {
		_ = req.Reply(ok, nil)
	}
}

// exit sends the exit status and closes the channel.
func exit(ch ssh.Channel, status int) {
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
	_ = ch.CloseWrite()
	_ = ch.Close()
}

// begin counts a command that starts; false once the server is stopping.
func (s *SSHServer) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.active++
	return true
}

// end counts a command that ended.
func (s *SSHServer) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active--; s.active == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// acquireUser counts a command of the user against ssh_max_sessions_per_user.
func (s *SSHServer) acquireUser(uid int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUser[uid] >= s.cfg.SSHMaxSessionsPerUser {
		return false
	}
	s.perUser[uid]++
	return true
}

func (s *SSHServer) releaseUser(uid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perUser[uid]--; s.perUser[uid] <= 0 {
		delete(s.perUser, uid)
	}
}

// Host keys: the blobs ssh/ssh_host_ed25519_key and ssh/ssh_host_rsa_key
// (RSA for old clients; <data>/ssh/ on disk), OpenSSH private key files
// made on first start and never made again while they exist: one that is
// there but unreadable stops the start instead. Nodes sharing the data
// directory make them once between them (Create: the first wins).
var hostKeyFiles = []struct {
	name string
	gen  func() (any, error)
}{
	{"ssh_host_ed25519_key", func() (any, error) {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}},
	{"ssh_host_rsa_key", func() (any, error) { return rsa.GenerateKey(rand.Reader, 3072) }},
}

func loadHostKeys(ctx context.Context, blobs blob.Store, log *zap.Logger) ([]ssh.Signer, error) {
	var out []ssh.Signer
	for _, f := range hostKeyFiles {
		key := "ssh/" + f.name
		data, err := readBlob(ctx, blobs, key)
		if errors.Is(err, blob.ErrNotFound) {
			var made bool
			data, made, err = makeHostKey(ctx, blobs, key, f.gen)
			if made {
				log.Info("ssh: host key generated", zap.String("key", key))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("ssh: host key %s: %w", key, err)
		}
		signer, err := ssh.ParsePrivateKey(data)
		if err != nil {
			return nil, fmt.Errorf("ssh: host key %s: %w (remove it to have a new one made)", key, err)
		}
		out = append(out, signer)
	}
	return out, nil
}

// maxHostKeyBytes bounds what is read as a host key (an RSA key of 16384
// bits is under 13 KiB).
const maxHostKeyBytes = 64 << 10

// readBlob reads a small blob whole.
func readBlob(ctx context.Context, blobs blob.Store, key string) ([]byte, error) {
	o, err := blobs.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return io.ReadAll(io.LimitReader(o, maxHostKeyBytes))
}

// makeHostKey stores a new key at key unless another process made one
// meanwhile, and returns the stored key and whether it is the new one.
func makeHostKey(ctx context.Context, blobs blob.Store, key string, gen func() (any, error)) ([]byte, bool, error) {
	k, err := gen()
	if err != nil {
		return nil, false, err
	}
	block, err := ssh.MarshalPrivateKey(k, "fennec host key")
	if err != nil {
		return nil, false, err
	}
	data := pem.EncodeToMemory(block)
	_, err = blobs.Create(ctx, key, bytes.NewReader(data))
	if errors.Is(err, blob.ErrExist) {
		data, err = readBlob(ctx, blobs, key)
		return data, false, err
	}
	return data, err == nil, err
}
