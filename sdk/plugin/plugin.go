package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/grpc"
)

// Errors every kind shares. A kind may re-export them under its own name
// (authprovider.ErrUnavailable is ErrUnavailable), so errors.Is works with
// either.
var (
	// ErrUnavailable is a failure, not an outcome: the plugin (its process,
	// its machine, or what it talks to) could not answer. Host-side clients
	// wrap every gRPC error with it; the host fails or retries the work.
	ErrUnavailable = errors.New("plugin: unavailable")
	// ErrInvalidSettings: Configure could not use the settings. The
	// previous settings, if any, stay in force.
	ErrInvalidSettings = errors.New("plugin: invalid settings")
	// ErrNotSupported: the plugin does not implement an optional method.
	ErrNotSupported = errors.New("plugin: not supported")
)

// Description is what a plugin says about itself.
type Description struct {
	// Kind is the kind the process serves ("auth"). Serve fills it in on
	// the wire; a plugin's Describe leaves it empty.
	Kind    string
	Name    string
	Version string
	// APIVersions lists the versions of its kind's contract the plugin
	// speaks; the host refuses a plugin that does not speak its own.
	APIVersions []string
	// Features lists optional abilities, named by the kind.
	Features []string
	// SettingsSchema is the JSON schema of the settings object Configure
	// takes; empty when the plugin takes none.
	SettingsSchema string
}

// Has reports whether the description announces the feature.
func (d Description) Has(feature string) bool { return slices.Contains(d.Features, feature) }

// Speaks reports whether the description lists the API version.
func (d Description) Speaks(version string) bool { return slices.Contains(d.APIVersions, version) }

// Base is what every plugin implements, whatever its kind. Its methods are
// called concurrently with the kind's.
type Base interface {
	// Describe says who the plugin is and what it can do.
	Describe(ctx context.Context) (Description, error)
	// Configure hands the plugin its settings, a JSON object. Settings it
	// cannot use are refused with an error (ErrInvalidSettings over the
	// wire) and leave the previous settings in force. The host calls it
	// again after every restart of a plugin process.
	Configure(ctx context.Context, settings []byte) error
}

// Kind tells a host how to run plugins of one kind: adding a kind is a
// package with a gRPC service, a host-side client and one of these, not a
// second supervisor. The host launches, describes, configures, restarts and
// stops every kind alike; the descriptor supplies what differs.
type Kind struct {
	// Name is the kind as the configuration names it (kind: auth) and as
	// its plugins report it in Describe.
	Name string
	// APIVersion is the version of the kind's contract the host speaks; a
	// plugin must list it in Description.APIVersions.
	APIVersion string
	// NewClient returns the host-side client of the kind's service over a
	// plugin process's connection. The host builds one per process and
	// hands it to the functions given to Conn.Call.
	NewClient func(cc grpc.ClientConnInterface) any
	// Route returns what the application sees of one configured plugin: a
	// value of the kind's Go interface (authprovider.Provider) that sends
	// each call through conn to the current process. It is called once per
	// plugin and must stay valid across restarts.
	Route func(conn Conn) any
}

// Conn is a host's handle on one configured plugin, stable across restarts
// of its process. Core's plugin host implements it; a kind's Route uses it.
type Conn interface {
	// Name is the plugin's name in the configuration.
	Name() string
	// Describe asks the current process who it is.
	Describe(ctx context.Context) (Description, error)
	// Configure sends new settings to the current process and, when it
	// takes them, keeps them for every later restart.
	Configure(ctx context.Context, settings []byte) error
	// Call runs fn with the kind's client of the current process (what
	// Kind.NewClient returned). Its context is bounded by the host's call
	// timeout and ends when that process dies. Without a running process
	// it fails at once with an error wrapping ErrUnavailable.
	Call(ctx context.Context, fn func(ctx context.Context, client any) error) error
	// Stream is Call without the host's call timeout, for calls that last
	// as long as their work (a job's run, a large download): its context
	// ends only with ctx or when the process dies.
	Stream(ctx context.Context, fn func(ctx context.Context, client any) error) error
}

// Call is Conn.Call for a kind's typed client C and a call returning T: the
// helper a kind's Route is written with.
func Call[C, T any](ctx context.Context, conn Conn, fn func(context.Context, C) (T, error)) (T, error) {
	return typed(ctx, conn.Call, fn)
}

// Stream is Conn.Stream for a kind's typed client C and a call returning T.
func Stream[C, T any](ctx context.Context, conn Conn, fn func(context.Context, C) (T, error)) (T, error) {
	return typed(ctx, conn.Stream, fn)
}

func typed[C, T any](ctx context.Context, call func(context.Context, func(context.Context, any) error) error, fn func(context.Context, C) (T, error)) (T, error) {
	var out T
	err := call(ctx, func(ctx context.Context, client any) error {
		c, ok := client.(C)
		if !ok {
			return fmt.Errorf("%w: the host holds a %T, not a %T", ErrUnavailable, client, *new(C))
		}
		v, err := fn(ctx, c)
		out = v
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
