package plugin

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pluginpb "github.com/fennec-forge/fennec/sdk/plugin/proto"
)

// Client is the host side of the base service of one plugin process. Every
// gRPC error wraps ErrUnavailable.
type Client struct {
	rpc pluginpb.BaseClient
}

// NewClient talks to the base service on cc.
func NewClient(cc grpc.ClientConnInterface) *Client {
	return &Client{rpc: pluginpb.NewBaseClient(cc)}
}

// Describe asks the plugin who it is; Kind is the kind the process serves.
func (c *Client) Describe(ctx context.Context) (Description, error) {
	resp, err := c.rpc.Describe(ctx, &pluginpb.DescribeRequest{})
	if err != nil {
		return Description{}, Unavailable(ctx, err)
	}
	return Description{
		Kind:           resp.GetKind(),
		Name:           resp.GetName(),
		Version:        resp.GetVersion(),
		APIVersions:    resp.GetApiVersions(),
		Features:       resp.GetFeatures(),
		SettingsSchema: resp.GetSettingsSchema(),
	}, nil
}

// Configure sends the settings; a refusal wraps ErrInvalidSettings.
func (c *Client) Configure(ctx context.Context, settings []byte) error {
	resp, err := c.rpc.Configure(ctx, &pluginpb.ConfigureRequest{Settings: settings})
	if err != nil {
		return Unavailable(ctx, err)
	}
	if resp.GetRefused() {
		if m := resp.GetMessage(); m != "" {
			return fmt.Errorf("%w: %s", ErrInvalidSettings, m)
		}
		return ErrInvalidSettings
	}
	return nil
}

// Unavailable wraps a gRPC error from a plugin in ErrUnavailable: the
// plugin or its machine failed. When the caller's context ended, that cause
// is wrapped too. Every kind's client uses it.
func Unavailable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, context.Cause(ctx))
	}
	if st, ok := status.FromError(err); ok {
		return fmt.Errorf("%w: %s: %s", ErrUnavailable, st.Code(), st.Message())
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// Interface guard.
var _ Base = (*Client)(nil)
