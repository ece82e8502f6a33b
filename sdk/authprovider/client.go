package authprovider

import (
	"context"
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc"

	authproviderpb "github.com/fennec-forge/fennec/sdk/authprovider/proto"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// Client is the host side of the contract: a Provider (and UserSearcher,
// UserSyncer) over a gRPC connection to a plugin, Describe and Configure
// through the base service. Rejections come back as the sentinels; every
// gRPC error, and any answer that breaks the contract, wraps ErrUnavailable.
type Client struct {
	*plugin.Client
	rpc authproviderpb.AuthProviderClient
}

// NewClient talks to the base and auth-provider services on cc.
func NewClient(cc grpc.ClientConnInterface) *Client {
	return &Client{Client: plugin.NewClient(cc), rpc: authproviderpb.NewAuthProviderClient(cc)}
}

// Authenticate asks the plugin to check login and password. A login that is
// not valid UTF-8 names no one and is refused without a call.
func (c *Client) Authenticate(ctx context.Context, login, password string) (Identity, error) {
	if !utf8.ValidString(login) {
		return Identity{}, ErrInvalidCredentials
	}
	resp, err := c.rpc.Authenticate(ctx, &authproviderpb.AuthenticateRequest{Login: login, Password: []byte(password)})
	if err != nil {
		return Identity{}, unavailable(ctx, err)
	}
	switch res := resp.GetResult().(type) {
	case *authproviderpb.AuthenticateResponse_Rejection:
		return Identity{}, rejected(res.Rejection, ErrInvalidCredentials)
	case *authproviderpb.AuthenticateResponse_Identity:
		id := fromProto(res.Identity)
		if id.ExternalID == "" || id.Username == "" {
			return Identity{}, fmt.Errorf("%w: plugin returned an identity without external id or username", ErrUnavailable)
		}
		return id, nil
	}
	return Identity{}, fmt.Errorf("%w: plugin answered neither an identity nor a rejection", ErrUnavailable)
}

// SearchUsers asks for users whose username contains query; limit <= 0
// leaves the number to the plugin. ErrNotSupported when the plugin does not
// implement it.
func (c *Client) SearchUsers(ctx context.Context, query string, limit int) ([]Identity, error) {
	if !utf8.ValidString(query) {
		return []Identity{}, nil
	}
	resp, err := c.rpc.SearchUsers(ctx, &authproviderpb.SearchUsersRequest{Query: query, Limit: clampLimit(limit)})
	if err != nil {
		return nil, unavailable(ctx, err)
	}
	if r := resp.GetRejection(); r != nil {
		return nil, rejected(r, ErrNotSupported)
	}
	return fromProtos(resp.GetIdentities()), nil
}

// SyncUsers returns the identities of the external ids still present in the
// directory. ErrNotSupported when the plugin does not implement it.
func (c *Client) SyncUsers(ctx context.Context, externalIDs []string) ([]Identity, error) {
	// An id that is not valid UTF-8 cannot travel and cannot name anyone.
	valid := make([]string, 0, len(externalIDs))
	for _, id := range externalIDs {
		if utf8.ValidString(id) {
			valid = append(valid, id)
		}
	}
	resp, err := c.rpc.SyncUsers(ctx, &authproviderpb.SyncUsersRequest{ExternalIds: valid})
	if err != nil {
		return nil, unavailable(ctx, err)
	}
	if r := resp.GetRejection(); r != nil {
		return nil, rejected(r, ErrNotSupported)
	}
	return fromProtos(resp.GetPresent()), nil
}

func fromProtos(ids []*authproviderpb.Identity) []Identity {
	out := make([]Identity, len(ids))
	for i, id := range ids {
		out[i] = fromProto(id)
	}
	return out
}

// rejected turns a wire rejection back into its sentinel; an unspecified
// reason becomes fallback.
func rejected(r *authproviderpb.Rejection, fallback error) error {
	base := fallback
	for _, m := range reasons {
		if m.reason == r.GetReason() {
			base = m.err
		}
	}
	if r.GetMessage() != "" {
		return fmt.Errorf("%w: %s", base, r.GetMessage())
	}
	return base
}

func unavailable(ctx context.Context, err error) error { return plugin.Unavailable(ctx, err) }

// Interface guards.
var (
	_ Provider     = (*Client)(nil)
	_ UserSearcher = (*Client)(nil)
	_ UserSyncer   = (*Client)(nil)
)
