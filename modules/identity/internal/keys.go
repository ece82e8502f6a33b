package internal

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The SSH keys of user.Service. The HTTP adapter is httpkeys.go.

// keyOf is the contract's record of k.
func keyOf(k *Key) user.Key {
	return user.Key{ID: k.ID, UserID: k.UserID, Title: k.Title, Key: k.Key, Fingerprint: k.Fingerprint, CreatedAt: k.CreatedAt}
}

// maxKeyBytes bounds a submitted key; the largest real keys (RSA 16384)
// are about 3 KB.
const maxKeyBytes = 16 << 10

// parseKey validates an authorized_keys line (options and a comment are
// allowed) and returns it without options, with its SHA-256 fingerprint.
func parseKey(text string) (normalized, fingerprint string, ok bool) {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > maxKeyBytes || strings.ContainsAny(text, "\r\n") {
		return "", "", false
	}
	pub, comment, _, rest, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil || len(strings.TrimSpace(string(rest))) > 0 {
		return "", "", false
	}
	normalized = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if comment != "" {
		normalized += " " + comment
	}
	return normalized, ssh.FingerprintSHA256(pub), true
}

// Keys implements user.Service.
func (s *Service) Keys(ctx context.Context, userID int64, offset, limit int) ([]user.Key, int, error) {
	if err := mayManage(ctx, userID); err != nil {
		return nil, 0, err
	}
	return listByUser(ctx, s.db, keys, userID, offset, limit, keyOf)
}

// Key implements user.Service.
func (s *Service) Key(ctx context.Context, userID, keyID int64) (user.Key, error) {
	if err := mayManage(ctx, userID); err != nil {
		return user.Key{}, err
	}
	var k *Key
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		k, err = keys.Get(tx, keyID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) || keyID <= 0 || (k != nil && k.UserID != userID) {
		return user.Key{}, user.ErrKeyNotFound
	}
	if err != nil {
		return user.Key{}, err
	}
	return keyOf(k), nil
}

// AddKey implements user.Service.
func (s *Service) AddKey(ctx context.Context, userID int64, title, key string) (user.Key, error) {
	if err := mayManage(ctx, userID); err != nil {
		return user.Key{}, err
	}
	if _, err := s.userByID(ctx, userID); err != nil {
		return user.Key{}, err
	}
	title = strings.TrimSpace(title)
	verr := ValidationError{}
	if title == "" {
		verr.Add("title", "can't be blank")
	} else if utf8.RuneCountInString(title) > 255 {
		verr.Add("title", "is too long (maximum is 255 characters)")
	}
	normalized, fp, ok := parseKey(key)
	if !ok {
		verr.Add("key", "is invalid")
		verr.Add("fingerprint", "cannot be generated")
	}
	if len(verr) > 0 {
		return user.Key{}, verr
	}
	k := &Key{UserID: userID, Title: title, Key: normalized, Fingerprint: fp, CreatedAt: s.now().UTC()}
	err := s.update(ctx, func(tx *store.Tx) error { return keys.Insert(tx, k) })
	if err != nil {
		return user.Key{}, conflictAsValidation(err)
	}
	return keyOf(k), nil
}

// DeleteKey implements user.Service.
func (s *Service) DeleteKey(ctx context.Context, userID, keyID int64) (user.Key, error) {
	if err := mayManage(ctx, userID); err != nil {
		return user.Key{}, err
	}
	k, err := deleteOwnedRow(ctx, s, keys, userID, keyID, user.ErrKeyNotFound)
	if err != nil {
		return user.Key{}, err
	}
	return keyOf(k), nil
}

// KeyByID implements user.Service.
func (s *Service) KeyByID(ctx context.Context, keyID int64) (user.Key, user.Account, error) {
	return s.keyWithOwner(ctx, func(tx *store.Tx) (*Key, error) {
		if keyID <= 0 {
			return nil, store.ErrNotFound
		}
		return keys.Get(tx, keyID)
	})
}

// KeyByFingerprint implements user.Service.
func (s *Service) KeyByFingerprint(ctx context.Context, fingerprint string) (user.Key, user.Account, error) {
	fp := strings.TrimSpace(fingerprint)
	return s.keyWithOwner(ctx, func(tx *store.Tx) (*Key, error) {
		if strings.HasPrefix(fp, "SHA256:") {
			return keys.GetBy(tx, "fingerprint", fp)
		}
		return keyByMD5(tx, strings.TrimPrefix(strings.ToLower(fp), "md5:"))
	})
}

// keyWithOwner reads the key find finds and its owner in one transaction
// (administrators).
func (s *Service) keyWithOwner(ctx context.Context, find func(*store.Tx) (*Key, error)) (user.Key, user.Account, error) {
	if err := requireAdmin(ctx); err != nil {
		return user.Key{}, user.Account{}, err
	}
	var k *Key
	var u *User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if k, err = find(tx); err != nil {
			return err
		}
		u, err = users.Get(tx, k.UserID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return user.Key{}, user.Account{}, user.ErrKeyNotFound
	}
	if err != nil {
		return user.Key{}, user.Account{}, err
	}
	return keyOf(k), accountOf(u), nil
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
