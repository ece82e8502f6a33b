package internal

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// nsInfo is a namespace with its current full path and full name (a
// subgroup's start with its ancestors'), and for a group its chain.
type nsInfo struct {
	ns    *Namespace
	path  string
	name  string
	owner *identity.UserInfo
	chain []*Namespace // groups: root first, ending with ns
}

// ownPath and ownName are the namespace's own path and name, without its
// ancestors', as the namespace object shows them beside full_path.
func (n nsInfo) ownPath() string {
	if n.ns.Kind == KindGroup {
		return n.ns.Path
	}
	return n.path
}

func (n nsInfo) ownName() string {
	if n.ns.Kind == KindGroup {
		return n.ns.Name
	}
	return n.name
}

// parentID is a subgroup's parent, nil otherwise (parent_id: null).
func (n nsInfo) parentID() *int64 {
	if n.ns == nil || n.ns.ParentID == 0 {
		return nil
	}
	id := n.ns.ParentID
	return &id
}

// groupIDs are the namespace's group and its ancestors, nearest first.
func (n nsInfo) groupIDs() []int64 {
	out := make([]int64, 0, len(n.chain))
	for i := len(n.chain) - 1; i >= 0; i-- {
		out = append(out, n.chain[i].ID)
	}
	return out
}

func (s *Service) namespaceInfo(ctx context.Context, ns *Namespace) (nsInfo, error) {
	if ns.Kind == KindGroup {
		chain := []*Namespace{ns}
		if ns.ParentID != 0 {
			if err := s.db.View(ctx, func(tx *store.Tx) error {
				var err error
				chain, err = groupChain(tx, ns)
				return err
			}); err != nil {
				return nsInfo{}, err
			}
		}
		return nsInfo{ns: ns, path: fullPath(chain), name: fullName(chain), chain: chain}, nil
	}
	u, err := s.users.UserByID(ctx, ns.OwnerID)
	if err != nil {
		return nsInfo{}, err
	}
	return nsInfo{ns: ns, path: u.Username, name: u.Name, owner: &u}, nil
}

func (s *Service) urls(ctx context.Context, nsPath, path string) (web, httpRepo, sshRepo string) {
	base := s.base(ctx)
	full := nsPath + "/" + path
	web = base + "/" + full
	host := base
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return web, web + ".git", s.sshURL(host, full)
}

// sshEndpoint is the host and port git over SSH is reached at; an empty
// host is the external URL's.
type sshEndpoint struct {
	host string
	port int
}

// SetSSHEndpoint records where git over SSH is served, for
// ssh_url_to_repo (projects.SSHEndpoint).
func (s *Service) SetSSHEndpoint(host string, port int) {
	s.ssh.Store(&sshEndpoint{host: host, port: port})
}

// sshURL is ssh_url_to_repo for the project at full path: scp-like syntax
// on port 22 (or before any SSH server said where it is), an ssh:// URL on
// another port, as GitLab writes them.
func (s *Service) sshURL(defaultHost, full string) string {
	e := s.ssh.Load()
	if e == nil {
		return "git@" + defaultHost + ":" + full + ".git"
	}
	host := e.host
	if host == "" {
		host = defaultHost
	}
	if e.port == 22 || e.port == 0 {
		return "git@" + host + ":" + full + ".git"
	}
	return "ssh://git@" + net.JoinHostPort(host, strconv.Itoa(e.port)) + "/" + full + ".git"
}

// slug turns a name into a path: accents dropped ("Ünïcödé" -> "unicode"),
// lowercase, runs of other characters become one dash
// ("My Prøject!" -> "my-project").
func slug(name string) string {
	plain, _, err := transform.String(transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC), name)
	if err != nil {
		plain = name
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(plain) {
		if t, ok := transliterate[r]; ok {
			b.WriteString(t)
			dash = false
			continue
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '.':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return strings.Trim(b.String(), "-.")
}

// transliterate covers Latin letters that do not decompose into a base
// letter and a mark.
var transliterate = map[rune]string{
	'ø': "o", 'æ': "ae", 'œ': "oe", 'ß': "ss", 'đ': "d", 'ł': "l", 'þ': "th", 'ð': "d", 'ı': "i",
}
