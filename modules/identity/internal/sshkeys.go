package internal

// The owner of an SSH key, for the repository module's SSH server.

import (
	"bytes"
	"context"
	"errors"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// SSHKeyOwner implements user.SSHKeys: it finds the owner of key (the wire
// format of a public key, ssh.PublicKey.Marshal). It reads the store in one
// transaction on every call, with no cache, so a key deleted or a user
// blocked a moment ago is seen at once.
func (s *Service) SSHKeyOwner(ctx context.Context, key []byte) (user.SSHKeyOwner, error) {
	pub, err := ssh.ParsePublicKey(key)
	if err != nil {
		return user.SSHKeyOwner{}, user.ErrKeyNotFound
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
		return user.SSHKeyOwner{}, user.ErrKeyNotFound
	}
	if err != nil {
		return user.SSHKeyOwner{}, err
	}
	// The fingerprint found the row; the key itself must be the same too.
	stored, _, _, _, perr := ssh.ParseAuthorizedKey([]byte(k.Key))
	if perr != nil || !bytes.Equal(stored.Marshal(), pub.Marshal()) {
		return user.SSHKeyOwner{}, user.ErrKeyNotFound
	}
	return user.SSHKeyOwner{KeyID: k.ID, User: summary(u)}, nil
}
