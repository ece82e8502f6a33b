package plugin

import (
	"context"
	"fmt"

	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// AuthProvider is one auth provider as the rest of the application sees it:
// a configured plugin (whose Provider routes to its current process) or an
// in-process implementation registered by an embedder.
type AuthProvider struct {
	Name string
	authprovider.Provider
}

// AuthProviders are the auth providers in the order they are asked.
type AuthProviders []AuthProvider

// route is the Provider of a plugin: stable across restarts, it sends each
// call to the current process, or answers ErrUnavailable at once when there
// is none. Every call is bounded by the host's call timeout and ends when the
// process it was sent to dies.
type route struct {
	in *instance
}

// call runs fn against the current process.
func call[T any](ctx context.Context, r route, fn func(context.Context, *authprovider.Client) (T, error)) (T, error) {
	var zero T
	c, gen, err := r.in.current()
	if err != nil {
		return zero, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.in.callTimeout)
	defer cancel()
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	stop := context.AfterFunc(gen, func() { cancelCause(context.Cause(gen)) })
	defer stop()
	v, err := fn(ctx, c)
	if err != nil {
		return zero, fmt.Errorf("plugin %s: %w", r.in.name, err)
	}
	return v, nil
}

func (r route) Describe(ctx context.Context) (authprovider.Description, error) {
	return call(ctx, r, func(ctx context.Context, c *authprovider.Client) (authprovider.Description, error) {
		return c.Describe(ctx)
	})
}

// Configure sends new settings to the running process and, when it takes
// them, keeps them for every later restart.
func (r route) Configure(ctx context.Context, settings []byte) error {
	_, err := call(ctx, r, func(ctx context.Context, c *authprovider.Client) (struct{}, error) {
		return struct{}{}, c.Configure(ctx, settings)
	})
	if err == nil {
		r.in.setSettings(settings)
	}
	return err
}

func (r route) Authenticate(ctx context.Context, login, password string) (authprovider.Identity, error) {
	return call(ctx, r, func(ctx context.Context, c *authprovider.Client) (authprovider.Identity, error) {
		return c.Authenticate(ctx, login, password)
	})
}

func (r route) SearchUsers(ctx context.Context, query string, limit int) ([]authprovider.Identity, error) {
	return call(ctx, r, func(ctx context.Context, c *authprovider.Client) ([]authprovider.Identity, error) {
		return c.SearchUsers(ctx, query, limit)
	})
}

func (r route) SyncUsers(ctx context.Context, externalIDs []string) ([]authprovider.Identity, error) {
	return call(ctx, r, func(ctx context.Context, c *authprovider.Client) ([]authprovider.Identity, error) {
		return c.SyncUsers(ctx, externalIDs)
	})
}

// Interface guards.
var (
	_ authprovider.Provider     = route{}
	_ authprovider.UserSearcher = route{}
	_ authprovider.UserSyncer   = route{}
)
