package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fennec-forge/fennec/sdk/plugin"
)

// base is a Base made of function fields.
type base struct {
	describe  func() (plugin.Description, error)
	configure func([]byte) error
}

func (b base) Describe(context.Context) (plugin.Description, error) { return b.describe() }
func (b base) Configure(_ context.Context, s []byte) error          { return b.configure(s) }

func serve(t *testing.T, b plugin.Base) *plugin.Client {
	t.Helper()
	conn, _ := goplugin.TestGRPCConn(t, func(s *grpc.Server) { plugin.RegisterBase(s, "test", b, nil) })
	return plugin.NewClient(conn)
}

// The kind comes from the server, not from the plugin's Describe.
func TestDescribeCarriesTheServedKind(t *testing.T) {
	c := serve(t, base{describe: func() (plugin.Description, error) {
		return plugin.Description{Kind: "forged", Name: "p", Version: "1", APIVersions: []string{"v1"}, Features: []string{"x"}}, nil
	}})
	d, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != "test" || d.Name != "p" || !d.Speaks("v1") || !d.Has("x") || d.Has("y") {
		t.Fatalf("%+v", d)
	}
}

// A refusal is data and comes back as ErrInvalidSettings with the reason
// (without the sentinel's text twice); a panic is a failure the server
// survives.
func TestConfigureRefusalAndPanic(t *testing.T) {
	c := serve(t, base{
		describe: func() (plugin.Description, error) { panic("boom") },
		configure: func(s []byte) error {
			return fmt.Errorf("%w: url is required", plugin.ErrInvalidSettings)
		},
	})
	err := c.Configure(context.Background(), []byte(`{}`))
	if !errors.Is(err, plugin.ErrInvalidSettings) || errors.Is(err, plugin.ErrUnavailable) ||
		err.Error() != "plugin: invalid settings: url is required" {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := c.Describe(context.Background()); !errors.Is(err, plugin.ErrUnavailable) {
		t.Fatalf("panic: %v, want ErrUnavailable", err)
	}
	if err := c.Configure(context.Background(), []byte(`{}`)); !errors.Is(err, plugin.ErrInvalidSettings) {
		t.Fatalf("the server did not survive the panic: %v", err)
	}
}

// conn is a Conn whose Call hands over a fixed client.
type conn struct{ client any }

func (conn) Name() string                                         { return "c" }
func (conn) Describe(context.Context) (plugin.Description, error) { return plugin.Description{}, nil }
func (conn) Configure(context.Context, []byte) error              { return nil }
func (c conn) Call(ctx context.Context, fn func(context.Context, any) error) error {
	return fn(ctx, c.client)
}
func (c conn) Stream(ctx context.Context, fn func(context.Context, any) error) error {
	return fn(ctx, c.client)
}

func TestCallTypesTheClient(t *testing.T) {
	n, err := plugin.Call(context.Background(), conn{client: 41}, func(_ context.Context, c int) (int, error) { return c + 1, nil })
	if err != nil || n != 42 {
		t.Fatalf("%d, %v", n, err)
	}
	s, err := plugin.Call(context.Background(), conn{client: 41}, func(_ context.Context, c string) (string, error) { return c, nil })
	if !errors.Is(err, plugin.ErrUnavailable) || s != "" {
		t.Fatalf("a client of the wrong type: %q, %v", s, err)
	}
	if n, err := plugin.Stream(context.Background(), conn{client: 1}, func(_ context.Context, c int) (int, error) { return c + 1, nil }); err != nil || n != 2 {
		t.Fatalf("Stream: %d, %v", n, err)
	}
}
