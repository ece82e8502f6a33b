package authprovider

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	authproviderpb "github.com/fennec-forge/fennec/sdk/authprovider/proto"
)

// server is the plugin side: it turns gRPC requests into Provider calls and
// rejections into response data.
type server struct {
	authproviderpb.UnimplementedAuthProviderServer
	p   Provider
	log hclog.Logger
}

// NewServer serves p over gRPC (Serve uses it; an embedder may register it
// on a gRPC server of its own). A panic in p is recovered, logged to log (nil:
// discarded) and answered as a failure, so hostile input cannot take the
// process down.
func NewServer(p Provider, log hclog.Logger) authproviderpb.AuthProviderServer {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &server{p: p, log: log}
}

func (s *server) recover(method string, err *error) {
	if r := recover(); r != nil {
		s.log.Error("provider panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "provider panicked in %s", method)
	}
}

func (s *server) Describe(ctx context.Context, _ *authproviderpb.DescribeRequest) (_ *authproviderpb.DescribeResponse, err error) {
	defer s.recover("Describe", &err)
	d, err := s.p.Describe(ctx)
	if err != nil {
		return nil, failure(err)
	}
	return &authproviderpb.DescribeResponse{
		Name:           d.Name,
		Version:        d.Version,
		ApiVersions:    d.APIVersions,
		Features:       d.Features,
		SettingsSchema: d.SettingsSchema,
	}, nil
}

func (s *server) Configure(ctx context.Context, req *authproviderpb.ConfigureRequest) (_ *authproviderpb.ConfigureResponse, err error) {
	defer s.recover("Configure", &err)
	if err := s.p.Configure(ctx, req.GetSettings()); err != nil {
		if isContextError(err) {
			return nil, failure(err)
		}
		// Anything Configure refuses is about the settings: say so as data.
		r := rejectionOf(err)
		if r == nil || r.Reason == authproviderpb.Reason_REASON_UNSPECIFIED || r.Reason == authproviderpb.Reason_REASON_INVALID_CREDENTIALS {
			r = &authproviderpb.Rejection{Reason: authproviderpb.Reason_REASON_INVALID_SETTINGS, Message: err.Error()}
		}
		return &authproviderpb.ConfigureResponse{Rejection: r}, nil
	}
	return &authproviderpb.ConfigureResponse{}, nil
}

func (s *server) Authenticate(ctx context.Context, req *authproviderpb.AuthenticateRequest) (_ *authproviderpb.AuthenticateResponse, err error) {
	defer s.recover("Authenticate", &err)
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
	defer s.recover("SearchUsers", &err)
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
	defer s.recover("SyncUsers", &err)
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
	{ErrInvalidSettings, authproviderpb.Reason_REASON_INVALID_SETTINGS},
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
func failure(err error) error {
	if isContextError(err) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, err.Error())
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

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
