package internal

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

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

type keyByFingerprintInput struct {
	Fingerprint string `query:"fingerprint" required:"true" doc:"SHA256:... or the legacy MD5 form (aa:bb:...)"`
}

type keyWithUserOutput struct{ Body *KeyWithUser }

func (h *handlers) registerKeys(a *api.API) {
	tags := []string{"keys"}
	api.Register(a, api.Op{ID: "list-own-keys", Method: http.MethodGet, Path: "/user/keys", Tags: tags,
		Summary: "The caller's SSH keys", Access: api.SignedIn}, func(ctx context.Context, in *keyListInput) (*keysOutput, error) {
		return h.listKeys(ctx, auth.FromContext(ctx).UserID(), in.PageParams)
	})
	api.Register(a, api.Op{ID: "list-user-keys", Method: http.MethodGet, Path: "/users/{id}/keys", Tags: tags,
		Summary: "A user's SSH keys (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userKeyListInput) (*keysOutput, error) {
		return h.listKeys(ctx, in.ID, in.PageParams)
	})
	api.Register(a, api.Op{ID: "get-own-key", Method: http.MethodGet, Path: "/user/keys/{key_id}", Tags: tags,
		Summary: "One of the caller's SSH keys", Access: api.SignedIn}, func(ctx context.Context, in *KeyIDPath) (*keyOutput, error) {
		k, err := h.svc.Key(ctx, auth.FromContext(ctx).UserID(), in.KeyID)
		if err != nil {
			return nil, err
		}
		v := keyView(k)
		return &keyOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "add-own-key", Method: http.MethodPost, Path: "/user/keys", Tags: tags,
		Summary: "Add an SSH key", Access: api.SignedIn}, func(ctx context.Context, in *keyInput) (*keyOutput, error) {
		return h.addKey(ctx, auth.FromContext(ctx).UserID(), in.Body)
	})
	api.Register(a, api.Op{ID: "add-user-key", Method: http.MethodPost, Path: "/users/{id}/keys", Tags: tags,
		Summary: "Add an SSH key for a user (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *userKeyInput) (*keyOutput, error) {
		return h.addKey(ctx, in.ID, in.Body)
	})
	api.Register(a, api.Op{ID: "delete-own-key", Method: http.MethodDelete, Path: "/user/keys/{key_id}", Tags: tags,
		Summary: "Delete an SSH key; 200 even when missing", Access: api.SignedIn, Status: http.StatusOK},
		func(ctx context.Context, in *KeyIDPath) (*maybeOutput, error) {
			k, err := h.svc.DeleteKey(ctx, auth.FromContext(ctx).UserID(), in.KeyID)
			if errors.Is(err, user.ErrKeyNotFound) {
				return nothing(), nil // idempotent
			}
			if err != nil {
				return nil, err
			}
			v := keyView(k)
			return &maybeOutput{Body: &v}, nil
		})
	api.Register(a, api.Op{ID: "delete-user-key", Method: http.MethodDelete, Path: "/users/{id}/keys/{key_id}", Tags: tags,
		Summary: "Delete a user's SSH key (administrators)", Access: api.AdminOnly, Status: http.StatusOK},
		func(ctx context.Context, in *UserKeyIDPath) (*keyOutput, error) {
			k, err := h.svc.DeleteKey(ctx, in.ID, in.KeyID)
			if err != nil {
				return nil, err
			}
			v := keyView(k)
			return &keyOutput{Body: &v}, nil
		})
	api.Register(a, api.Op{ID: "get-key", Method: http.MethodGet, Path: "/keys/{key_id}", Tags: tags,
		Summary: "An SSH key with its user (administrators)", Access: api.AdminOnly},
		func(ctx context.Context, in *KeyIDPath) (*keyWithUserOutput, error) {
			k, owner, err := h.svc.KeyByID(ctx, in.KeyID)
			if err != nil {
				return nil, err
			}
			return &keyWithUserOutput{Body: &KeyWithUser{KeyView: keyView(k), User: viewFor(ctx, owner)}}, nil
		})
	// GET /keys?fingerprint= (administrators): the key with its user, as
	// GET /keys/:id answers.
	api.Register(a, api.Op{ID: "get-key-by-fingerprint", Method: http.MethodGet, Path: "/keys", Tags: tags,
		Summary: "The SSH key with a fingerprint, with its user (administrators)", Access: api.AdminOnly},
		func(ctx context.Context, in *keyByFingerprintInput) (*keyWithUserOutput, error) {
			k, owner, err := h.svc.KeyByFingerprint(ctx, in.Fingerprint)
			if err != nil {
				return nil, err
			}
			return &keyWithUserOutput{Body: &KeyWithUser{KeyView: keyView(k), User: viewFor(ctx, owner)}}, nil
		})
}

func (h *handlers) listKeys(ctx context.Context, userID int64, p api.PageParams) (*keysOutput, error) {
	offset, limit := page(p)
	list, total, err := h.svc.Keys(ctx, userID, offset, limit)
	if err != nil {
		return nil, err
	}
	out := &keysOutput{PageHeaders: api.Paginate(ctx, p, total), Body: make([]KeyView, 0, len(list))}
	for _, k := range list {
		out.Body = append(out.Body, keyView(k))
	}
	return out, nil
}

func (h *handlers) addKey(ctx context.Context, userID int64, b keyBody) (*keyOutput, error) {
	k, err := h.svc.AddKey(ctx, userID, b.Title, b.Key)
	if err != nil {
		return nil, err
	}
	v := keyView(k)
	return &keyOutput{Body: &v}, nil
}
