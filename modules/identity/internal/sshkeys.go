package internal

// The owner of an SSH key, for the repository module's SSH server, and the
// administrators' GET /keys?fingerprint= lookup.

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// ErrKeyNotFound: no user has this SSH key.
var ErrKeyNotFound = errors.New("identity: SSH key not found")

// SSHKeyOwner is the owner of an SSH key, as the key's check found them.
type SSHKeyOwner struct {
	KeyID int64
	// User is the owner's summary; Blocked is set for blocked users (by an
	// administrator or by their directory).
	User *auth.User
}

// SSHKeyOwner finds the owner of key (the wire format of a public key,
// ssh.PublicKey.Marshal). It reads the store in one transaction on every
// call, with no cache, so a key deleted or a user blocked a moment ago is
// seen at once.
func (s *Service) SSHKeyOwner(ctx context.Context, key []byte) (SSHKeyOwner, error) {
	pub, err := ssh.ParsePublicKey(key)
	if err != nil {
		return SSHKeyOwner{}, ErrKeyNotFound
	}
	var k *Key
	var u *User
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if k, err = keys.GetBy(tx, "fingerprint", ssh.FingerprintSHA256(pub)); err != nil {
			return err
		}
		u, err = users.Get(tx, k.UserID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return SSHKeyOwner{}, ErrKeyNotFound
	}
	if err != nil {
		return SSHKeyOwner{}, err
	}
	// The fingerprint found the row; the key itself must be the same too.
	stored, _, _, _, perr := ssh.ParseAuthorizedKey([]byte(k.Key))
	if perr != nil || !bytes.Equal(stored.Marshal(), pub.Marshal()) {
		return SSHKeyOwner{}, ErrKeyNotFound
	}
	return SSHKeyOwner{KeyID: int64(k.ID), User: summary(u)}, nil
}

type keyByFingerprintInput struct {
	Fingerprint string `query:"fingerprint" required:"true" doc:"SHA256:... or the legacy MD5 form (aa:bb:...)"`
}

// registerKeyLookup adds GET /keys?fingerprint= (administrators): the key
// with its user, as GET /keys/:id answers.
func (s *Service) registerKeyLookup(a *api.API) {
	api.Register(a, api.Op{ID: "get-key-by-fingerprint", Method: http.MethodGet, Path: "/keys", Tags: []string{"keys"},
		Summary: "The SSH key with a fingerprint, with its user (administrators)", Access: api.AdminOnly},
		func(ctx context.Context, in *keyByFingerprintInput) (*struct{ Body *KeyWithUser }, error) {
			fp := strings.TrimSpace(in.Fingerprint)
			var k *Key
			var u *User
			err := s.db.View(ctx, func(tx *store.Tx) error {
				var err error
				if strings.HasPrefix(fp, "SHA256:") {
					k, err = keys.GetBy(tx, "fingerprint", fp)
				} else {
					k, err = keyByMD5(tx, strings.TrimPrefix(strings.ToLower(fp), "md5:"))
				}
				if err != nil {
					return err
				}
				u, err = users.Get(tx, k.UserID)
				return err
			})
			if errors.Is(err, store.ErrNotFound) {
				return nil, api.NotFound("Key")
			}
			if err != nil {
				return nil, err
			}
			return &struct{ Body *KeyWithUser }{Body: &KeyWithUser{KeyView: keyView(k), User: viewFor(ctx, u)}}, nil
		})
}

// keyByMD5 finds a key by its legacy MD5 fingerprint, which is not
// indexed: a scan, for an administrator's occasional lookup.
func keyByMD5(tx *store.Tx, fp string) (*Key, error) {
	var found *Key
	err := keys.Scan(tx, false, 0, func(k *Key) (bool, error) {
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.Key))
		if err == nil && ssh.FingerprintLegacyMD5(pub) == fp {
			found = k
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, store.ErrNotFound
	}
	return found, nil
}
