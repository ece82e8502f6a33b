package plugin

import (
	"context"
	"fmt"

	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

// This file makes an instance the sdk's Conn: the stable handle a kind's
// Route turns into the kind's Go interface. Every call goes to the current
// process, or (once the plugin's first start has settled) fails at once
// with ErrUnavailable when there is none; it is
// bounded by the host's call timeout and ends when the process it was sent
// to dies.

// Name is the plugin's configured name.
func (in *instance) Name() string { return in.name }

// Call runs fn with the kind's client of the current process.
func (in *instance) Call(ctx context.Context, fn func(context.Context, any) error) error {
	_, client, gen, err := in.current(ctx)
	if err != nil {
		return err
	}
	return in.bounded(ctx, gen, func(ctx context.Context) error { return fn(ctx, client) })
}

// Stream runs fn like Call but without the call timeout: the call lasts as
// long as ctx and the process.
func (in *instance) Stream(ctx context.Context, fn func(context.Context, any) error) error {
	_, client, gen, err := in.current(ctx)
	if err != nil {
		return err
	}
	return in.within(ctx, gen, func(ctx context.Context) error { return fn(ctx, client) })
}

// Describe asks the current process who it is.
func (in *instance) Describe(ctx context.Context) (sdkplugin.Description, error) {
	base, _, gen, err := in.current(ctx)
	if err != nil {
		return sdkplugin.Description{}, err
	}
	var d sdkplugin.Description
	err = in.bounded(ctx, gen, func(ctx context.Context) (err error) {
		d, err = base.Describe(ctx)
		return err
	})
	return d, err
}

// Configure sends new settings to the current process and, when it takes
// them, keeps them for every later restart.
func (in *instance) Configure(ctx context.Context, settings []byte) error {
	base, _, gen, err := in.current(ctx)
	if err != nil {
		return err
	}
	if err := in.bounded(ctx, gen, func(ctx context.Context) error { return base.Configure(ctx, settings) }); err != nil {
		return err
	}
	in.setSettings(settings)
	return nil
}

// bounded runs fn under the call timeout, ending it with the cause when the
// process generation gen ends, and names the plugin in its error.
func (in *instance) bounded(ctx context.Context, gen context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, in.callTimeout)
	defer cancel()
	return in.within(ctx, gen, fn)
}

// within runs fn, ending it with the cause when the process generation gen
// ends, and names the plugin in its error.
func (in *instance) within(ctx context.Context, gen context.Context, fn func(context.Context) error) error {
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	stop := context.AfterFunc(gen, func() { cancelCause(context.Cause(gen)) })
	defer stop()
	if err := fn(ctx); err != nil {
		return fmt.Errorf("plugin %s: %w", in.name, err)
	}
	return nil
}

// Interface guard.
var _ sdkplugin.Conn = (*instance)(nil)
