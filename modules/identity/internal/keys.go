package internal

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// KeyView is the SSH key resource.
type KeyView struct {
	ID        uint64   `json:"id"`
	Title     string   `json:"title"`
	Key       string   `json:"key"`
	CreatedAt api.Time `json:"created_at"`
}

// KeyWithUser is GET /keys/:id: the key with its owner.
type KeyWithUser struct {
	KeyView
	User any `json:"user"`
}

func keyView(k *Key) KeyView {
	return KeyView{ID: k.ID, Title: k.Title, Key: k.Key, CreatedAt: api.NewTime(k.CreatedAt)}
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

type keyBody struct {
	Title string `json:"title" required:"true"`
	Key   string `json:"key" required:"true"`
}

type keyInput struct{ Body keyBody }

type userKeyInput struct {
	UserIDPath
	Body keyBody
}

type KeyIDPath struct {
	KeyID int64 `path:"key_id"`
}

type UserKeyIDPath struct {
	UserIDPath
	KeyIDPath
}

type keyOutput struct{ Body *KeyView }

type keysOutput struct {
	api.PageHeaders
	Body []KeyView
}

type keyListInput struct {
	api.PageParams
}

type userKeyListInput struct {
	UserIDPath
	api.PageParams
}

func (s *Service) registerKeys(a *api.API) {
	tags := []string{"keys"}
	api.Register(a, api.Op{ID: "list-own-keys", Method: http.MethodGet, Path: "/user/keys", Tags: tags,
		Summary: "The caller's SSH keys", Access: api.SignedIn}, func(ctx context.Context, in *keyListInput) (*keysOutput, error) {
		return s.listKeys(ctx, auth.FromContext(ctx).UserID(), in.PageParams)
	})
	api.Register(a, api.Op{ID: "list-user-keys", Method: http.MethodGet, Path: "/users/{id}/keys", Tags: tags,
		Summary: "A user's SSH keys (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userKeyListInput) (*keysOutput, error) {
		if _, err := s.userByID(ctx, in.ID); err != nil {
			return nil, err
		}
		return s.listKeys(ctx, in.ID, in.PageParams)
	})
	api.Register(a, api.Op{ID: "get-own-key", Method: http.MethodGet, Path: "/user/keys/{key_id}", Tags: tags,
		Summary: "One of the caller's SSH keys", Access: api.SignedIn}, func(ctx context.Context, in *KeyIDPath) (*keyOutput, error) {
		k, err := s.ownedKey(ctx, auth.FromContext(ctx).UserID(), in.KeyID)
		if err != nil {
			return nil, err
		}
		v := keyView(k)
		return &keyOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "add-own-key", Method: http.MethodPost, Path: "/user/keys", Tags: tags,
		Summary: "Add an SSH key", Access: api.SignedIn}, func(ctx context.Context, in *keyInput) (*keyOutput, error) {
		return s.addKey(ctx, auth.FromContext(ctx).UserID(), in.Body)
	})
	api.Register(a, api.Op{ID: "add-user-key", Method: http.MethodPost, Path: "/users/{id}/keys", Tags: tags,
		Summary: "Add an SSH key for a user (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userKeyInput) (*keyOutput, error) {
		if _, err := s.userByID(ctx, in.ID); err != nil {
			return nil, err
		}
		return s.addKey(ctx, in.ID, in.Body)
	})
	api.Register(a, api.Op{ID: "delete-own-key", Method: http.MethodDelete, Path: "/user/keys/{key_id}", Tags: tags,
		Summary: "Delete an SSH key; 200 even when missing", Access: api.SignedIn, Status: http.StatusOK},
		func(ctx context.Context, in *KeyIDPath) (*maybeOutput, error) {
			k, err := s.deleteKey(ctx, auth.FromContext(ctx).UserID(), in.KeyID)
			if errors.Is(err, errKeyNotFound) {
				return nothing(), nil // idempotent
			}
			if err != nil {
				return nil, err
			}
			return &maybeOutput{Body: k.Body}, nil
		})
	api.Register(a, api.Op{ID: "delete-user-key", Method: http.MethodDelete, Path: "/users/{id}/keys/{key_id}", Tags: tags,
		Summary: "Delete a user's SSH key (administrators)", Access: api.AdminOnly, Status: http.StatusOK},
		func(ctx context.Context, in *UserKeyIDPath) (*keyOutput, error) {
			if _, err := s.userByID(ctx, in.ID); err != nil {
				return nil, err
			}
			k, err := s.deleteKey(ctx, in.ID, in.KeyID)
			if errors.Is(err, errKeyNotFound) {
				return nil, api.NotFound("Key")
			}
			return k, err
		})
	api.Register(a, api.Op{ID: "get-key", Method: http.MethodGet, Path: "/keys/{key_id}", Tags: tags,
		Summary: "An SSH key with its user (administrators)", Access: api.AdminOnly},
		func(ctx context.Context, in *KeyIDPath) (*struct{ Body *KeyWithUser }, error) {
			var k *Key
			var u *User
			err := s.db.View(ctx, func(tx *store.Tx) error {
				var err error
				if k, err = keys.Get(tx, uint64(in.KeyID)); err != nil {
					return err
				}
				u, err = users.Get(tx, k.UserID)
				return err
			})
			if errors.Is(err, store.ErrNotFound) || in.KeyID <= 0 {
				return nil, api.NotFound("Key")
			}
			if err != nil {
				return nil, err
			}
			return &struct{ Body *KeyWithUser }{Body: &KeyWithUser{KeyView: keyView(k), User: viewFor(ctx, u)}}, nil
		})
}

var errKeyNotFound = errors.New("identity: key not found")

func (s *Service) listKeys(ctx context.Context, userID int64, p api.PageParams) (*keysOutput, error) {
	list, total, err := listByUser(ctx, s.db, keys, userID, p, func(k *Key) KeyView { return keyView(k) })
	if err != nil {
		return nil, err
	}
	return &keysOutput{PageHeaders: api.Paginate(ctx, p, total), Body: list}, nil
}

func (s *Service) ownedKey(ctx context.Context, userID, keyID int64) (*Key, error) {
	var k *Key
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		k, err = keys.Get(tx, uint64(keyID))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || keyID <= 0 || (k != nil && int64(k.UserID) != userID) {
		return nil, api.NotFound("Key")
	}
	return k, err
}

func (s *Service) addKey(ctx context.Context, userID int64, b keyBody) (*keyOutput, error) {
	title := strings.TrimSpace(b.Title)
	verr := ValidationError{}
	if title == "" {
		verr.Add("title", "can't be blank")
	} else if utf8.RuneCountInString(title) > 255 {
		verr.Add("title", "is too long (maximum is 255 characters)")
	}
	normalized, fp, ok := parseKey(b.Key)
	if !ok {
		verr.Add("key", "is invalid")
		verr.Add("fingerprint", "cannot be generated")
	}
	if len(verr) > 0 {
		return nil, verr
	}
	k := &Key{UserID: uint64(userID), Title: title, Key: normalized, Fingerprint: fp, CreatedAt: s.now().UTC()}
	err := s.update(ctx, func(tx *store.Tx) error { return keys.Insert(tx, k) })
	if err != nil {
		return nil, conflictAsValidation(err)
	}
	v := keyView(k)
	return &keyOutput{Body: &v}, nil
}

func (s *Service) deleteKey(ctx context.Context, userID, keyID int64) (*keyOutput, error) {
	k, err := deleteOwnedRow(ctx, s, keys, userID, keyID, errKeyNotFound)
	if err != nil {
		return nil, err
	}
	v := keyView(k)
	return &keyOutput{Body: &v}, nil
}
