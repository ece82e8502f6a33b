package executor

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	executorpb "github.com/fennec-forge/fennec/sdk/executor/proto"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// Client is the host side of the contract: an Executor over a gRPC
// connection to a plugin, Describe and Configure through the base service.
// Every gRPC error, and any answer that breaks the contract (a trace with a
// gap, a stream without a result), wraps ErrUnavailable.
type Client struct {
	*plugin.Client
	rpc executorpb.ExecutorClient
}

// NewClient talks to the base and executor services on cc.
func NewClient(cc grpc.ClientConnInterface) *Client {
	return &Client{Client: plugin.NewClient(cc), rpc: executorpb.NewExecutorClient(cc)}
}

// Capabilities asks which jobs the executor takes.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	resp, err := c.rpc.Capabilities(ctx, &executorpb.CapabilitiesRequest{})
	if err != nil {
		return Capabilities{}, plugin.Unavailable(ctx, err)
	}
	if resp.GetConcurrency() < 1 {
		return Capabilities{}, fmt.Errorf("%w: the executor announced a concurrency of %d", ErrUnavailable, resp.GetConcurrency())
	}
	return Capabilities{Tags: resp.GetTags(), RunUntagged: resp.GetRunUntagged(), Concurrency: int(resp.GetConcurrency())}, nil
}

// Run runs job on the plugin, handing trace each chunk as it arrives. A
// chunk the plugin sends again (an offset already seen) is passed on only
// for its new bytes; a gap fails the run. When trace returns an error the
// call is cancelled (the plugin kills the job) and Run returns that error.
func (c *Client) Run(ctx context.Context, job Job, trace func(TraceChunk) error) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.Run(ctx, &executorpb.RunRequest{Job: jobToWire(job)})
	if err != nil {
		return Result{}, plugin.Unavailable(ctx, err)
	}
	var next int64 // the offset the next new byte has
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return Result{}, fmt.Errorf("%w: the executor ended job %d's stream without a result", ErrUnavailable, job.ID)
		}
		if err != nil {
			return Result{}, plugin.Unavailable(ctx, err)
		}
		switch e := ev.GetEvent().(type) {
		case *executorpb.RunEvent_Trace:
			off, data := e.Trace.GetOffset(), e.Trace.GetData()
			if off > next {
				return Result{}, fmt.Errorf("%w: job %d's trace jumps from byte %d to %d", ErrUnavailable, job.ID, next, off)
			}
			if skip := next - off; skip < int64(len(data)) {
				if err := trace(TraceChunk{Offset: next, Data: data[skip:]}); err != nil {
					return Result{}, err
				}
				next = off + int64(len(data))
			}
		case *executorpb.RunEvent_Result:
			return resultFromWire(e.Result), nil
		default:
			return Result{}, fmt.Errorf("%w: job %d's stream carried an unknown event", ErrUnavailable, job.ID)
		}
	}
}

// Cancel asks the plugin to stop job jobID.
func (c *Client) Cancel(ctx context.Context, jobID int64) error {
	if _, err := c.rpc.Cancel(ctx, &executorpb.CancelRequest{JobId: jobID}); err != nil {
		return plugin.Unavailable(ctx, err)
	}
	return nil
}

// Artifacts copies job jobID's archive from the plugin to w.
func (c *Client) Artifacts(ctx context.Context, jobID int64, w io.Writer) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.Artifacts(ctx, &executorpb.ArtifactsRequest{JobId: jobID})
	if err != nil {
		return 0, artifactsError(ctx, err)
	}
	var n int64
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, artifactsError(ctx, err)
		}
		m, err := w.Write(chunk.GetData())
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
}

func artifactsError(ctx context.Context, err error) error {
	if status.Code(err) == codes.NotFound && ctx.Err() == nil {
		if st, _ := status.FromError(err); st.Message() != "" && st.Message() != ErrNoArtifacts.Error() {
			return fmt.Errorf("%w: %s", ErrNoArtifacts, st.Message())
		}
		return ErrNoArtifacts
	}
	return plugin.Unavailable(ctx, err)
}

// Cleanup asks the plugin to remove what job jobID left.
func (c *Client) Cleanup(ctx context.Context, jobID int64) error {
	if _, err := c.rpc.Cleanup(ctx, &executorpb.CleanupRequest{JobId: jobID}); err != nil {
		return plugin.Unavailable(ctx, err)
	}
	return nil
}

// errorsIsNoArtifacts is errors.Is(err, ErrNoArtifacts), named for the
// server's mapping.
func errorsIsNoArtifacts(err error) bool { return errors.Is(err, ErrNoArtifacts) }

// Interface guard.
var _ Executor = (*Client)(nil)
