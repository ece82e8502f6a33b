package authprovider

import (
	"context"
	"errors"
	"math"

	"github.com/hashicorp/go-hclog"

	authproviderpb "github.com/fennec-forge/fennec/sdk/authprovider/proto"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// server is the plugin side of the auth-provider service (the base service,
// Describe and Configure, is sdk/plugin's): it turns gRPC requests into
// Provider calls and rejections into response data.
type server struct {
	authproviderpb.UnimplementedAuthProviderServer
	p   Provider
	log hclog.Logger
}

// NewServer serves p's auth-provider service over gRPC (Serve and Register
// use it beside the base service). A panic in p is recovered, logged to log (nil:
// discarded) and answered as a failure, so hostile input cannot take the
// process down.
func NewServer(p Provider, log hclog.Logger) authproviderpb.AuthProviderServer {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &server{p: p, log: log}
}

func (s *server) Authenticate(ctx context.Context, req *authproviderpb.AuthenticateRequest) (_ *authproviderpb.AuthenticateResponse, err error) {
	defer plugin.Recover(s.log, "Authenticate", &err)
	id, err := s.p.Authenticate(ctx, req.GetLogin(), string(req.GetPassword()))
	if err != nil {
		if r := rejectionOf(err); r != nil {
			return &authproviderpb.AuthenticateResponse{Result: &authproviderpb.AuthenticateResponse_Rejection{Rejection: r}}, nil
		}
		return nil, failure(err)
	}
	return &authproviderpb.AuthenticateResponse{Result: &authproviderpb.AuthenticateResponse_Identity{Identity: toProto(id)}}, nil
}

func (s *server) SearchUsers(ctx context.Context, req *authproviderpb.SearchUsersRequest) (_ *authproviderpb.SearchUsersResponse, err error) {
	defer plugin.Recover(s.log, "SearchUsers", &err)
	us, ok := s.p.(UserSearcher)
	if !ok {
		return &authproviderpb.SearchUsersResponse{Rejection: &authproviderpb.Rejection{Reason: authproviderpb.Reason_REASON_NOT_SUPPORTED}}, nil
	}
	ids, err := us.SearchUsers(ctx, req.GetQuery(), int(req.GetLimit()))
	if err != nil {
		if r := rejectionOf(err); r != nil {
			return &authproviderpb.SearchUsersResponse{Rejection: r}, nil
		}
		return nil, failure(err)
	}
	return &authproviderpb.SearchUsersResponse{Identities: toProtos(ids)}, nil
}

func (s *server) SyncUsers(ctx context.Context, req *authproviderpb.SyncUsersRequest) (_ *authproviderpb.SyncUsersResponse, err error) {
	defer plugin.Recover(s.log, "SyncUsers", &err)
	us, ok := s.p.(UserSyncer)
	if !ok {
		return &authproviderpb.SyncUsersResponse{Rejection: &authproviderpb.Rejection{Reason: authproviderpb.Reason_REASON_NOT_SUPPORTED}}, nil
	}
	ids, err := us.SyncUsers(ctx, req.GetExternalIds())
	if err != nil {
		if r := rejectionOf(err); r != nil {
			return &authproviderpb.SyncUsersResponse{Rejection: r}, nil
		}
		return nil, failure(err)
	}
	return &authproviderpb.SyncUsersResponse{Present: toProtos(ids)}, nil
}

// reasons maps each rejection sentinel to its wire reason. Order matters
// only for an error that wraps several; the most specific comes first.
var reasons = []struct {
	err    error
	reason authproviderpb.Reason
}{
	{ErrNotSupported, authproviderpb.Reason_REASON_NOT_SUPPORTED},
	{ErrDisabled, authproviderpb.Reason_REASON_DISABLED},
	{ErrUnknownUser, authproviderpb.Reason_REASON_UNKNOWN_USER},
	{ErrInvalidCredentials, authproviderpb.Reason_REASON_INVALID_CREDENTIALS},
}

// rejectionOf is the wire form of a rejection, or nil when err is a failure.
func rejectionOf(err error) *authproviderpb.Rejection {
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			msg := ""
			if err != r.err {
				msg = err.Error()
			}
			return &authproviderpb.Rejection{Reason: r.reason, Message: msg}
		}
	}
	return nil
}

// failure is the gRPC error for a provider failure.
func failure(err error) error { return plugin.Failure(err) }

func toProto(id Identity) *authproviderpb.Identity {
	return &authproviderpb.Identity{
		ExternalId: id.ExternalID,
		Username:   id.Username,
		Email:      id.Email,
		Name:       id.Name,
		Groups:     id.Groups,
	}
}

func toProtos(ids []Identity) []*authproviderpb.Identity {
	out := make([]*authproviderpb.Identity, len(ids))
	for i, id := range ids {
		out[i] = toProto(id)
	}
	return out
}

func fromProto(id *authproviderpb.Identity) Identity {
	return Identity{
		ExternalID: id.GetExternalId(),
		Username:   id.GetUsername(),
		Email:      id.GetEmail(),
		Name:       id.GetName(),
		Groups:     id.GetGroups(),
	}
}

func clampLimit(n int) int32 {
	switch {
	case n < 0:
		return 0
	case n > math.MaxInt32:
		return math.MaxInt32
	}
	return int32(n)
}
