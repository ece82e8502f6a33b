package blob

// A Store limited to some prefixes.

import (
	"context"
	"io"
	"strings"
)

// Under is s limited to keys under one of the prefixes: any other key is
// ErrInvalidKey. The core hands modules the data directory this way, so a
// module's key cannot reach the database file, the secret key or a
// directory no backup declares.
func Under(s Store, prefixes ...string) Store {
	return &under{s: s, prefixes: prefixes}
}

type under struct {
	s        Store
	prefixes []string
}

func (u *under) check(key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	for _, p := range u.prefixes {
		if key == p || strings.HasPrefix(key, p+"/") {
			return nil
		}
	}
	return invalid(key)
}

func (u *under) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := u.check(key); err != nil {
		return 0, err
	}
	return u.s.Put(ctx, key, r)
}

func (u *under) Create(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := u.check(key); err != nil {
		return 0, err
	}
	return u.s.Create(ctx, key, r)
}

func (u *under) Append(ctx context.Context, key string, offset int64, data []byte) (int64, error) {
	if err := u.check(key); err != nil {
		return 0, err
	}
	return u.s.Append(ctx, key, offset, data)
}

func (u *under) Open(ctx context.Context, key string) (Object, error) {
	if err := u.check(key); err != nil {
		return nil, err
	}
	return u.s.Open(ctx, key)
}

func (u *under) Delete(ctx context.Context, key string) error {
	if err := u.check(key); err != nil {
		return err
	}
	return u.s.Delete(ctx, key)
}

func (u *under) DeletePrefix(ctx context.Context, prefix string) error {
	if err := u.check(prefix); err != nil {
		return err
	}
	return u.s.DeletePrefix(ctx, prefix)
}

func (u *under) List(ctx context.Context, prefix string) ([]Entry, error) {
	if err := u.check(prefix); err != nil {
		return nil, err
	}
	return u.s.List(ctx, prefix)
}

var _ Store = (*under)(nil)
