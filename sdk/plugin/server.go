package plugin

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginpb "github.com/fennec-forge/fennec/sdk/plugin/proto"
)

// server is the plugin side of the base service.
type server struct {
	pluginpb.UnimplementedBaseServer
	kind string
	impl Base
	log  hclog.Logger
}

func (s *server) Describe(ctx context.Context, _ *pluginpb.DescribeRequest) (_ *pluginpb.DescribeResponse, err error) {
	defer Recover(s.log, "Describe", &err)
	d, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, Failure(err)
	}
	return &pluginpb.DescribeResponse{
		Kind:           s.kind,
		Name:           d.Name,
		Version:        d.Version,
		ApiVersions:    d.APIVersions,
		Features:       d.Features,
		SettingsSchema: d.SettingsSchema,
	}, nil
}

func (s *server) Configure(ctx context.Context, req *pluginpb.ConfigureRequest) (_ *pluginpb.ConfigureResponse, err error) {
	defer Recover(s.log, "Configure", &err)
	if err := s.impl.Configure(ctx, req.GetSettings()); err != nil {
		if isContextError(err) {
			return nil, Failure(err)
		}
		// Anything Configure refuses is about the settings: say so as data.
		msg := ""
		if err != ErrInvalidSettings {
			msg = strings.TrimPrefix(err.Error(), ErrInvalidSettings.Error()+": ")
		}
		return &pluginpb.ConfigureResponse{Refused: true, Message: msg}, nil
	}
	return &pluginpb.ConfigureResponse{}, nil
}

// Recover, deferred in a gRPC method of a plugin, turns a panic into a
// logged failure, so hostile input cannot take the process down.
func Recover(log hclog.Logger, method string, err *error) {
	if r := recover(); r != nil {
		log.Error("plugin panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = status.Errorf(codes.Internal, "plugin panicked in %s", method)
	}
}

// Failure is the gRPC error a plugin answers for a failure (not an
// outcome): the caller's cancellation or deadline as such, anything else as
// Unavailable.
func Failure(err error) error {
	if isContextError(err) {
		return status.FromContextError(err).Err()
	}
	return status.Error(codes.Unavailable, err.Error())
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
