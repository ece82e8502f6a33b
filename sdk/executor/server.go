package executor

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	executorpb "github.com/fennec-forge/fennec/sdk/executor/proto"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// server is the plugin side of the executor service (the base service,
// Describe and Configure, is sdk/plugin's).
type server struct {
	executorpb.UnimplementedExecutorServer
	e   Executor
	log hclog.Logger
}

// NewServer serves e's executor service over gRPC (Serve and Register use
// it beside the base service). A panic in e is recovered, logged to log
// (nil: discarded) and answered as a failure.
func NewServer(e Executor, log hclog.Logger) executorpb.ExecutorServer {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &server{e: e, log: log}
}

func (s *server) Capabilities(ctx context.Context, _ *executorpb.CapabilitiesRequest) (_ *executorpb.CapabilitiesResponse, err error) {
	defer plugin.Recover(s.log, "Capabilities", &err)
	c, err := s.e.Capabilities(ctx)
	if err != nil {
		return nil, plugin.Failure(err)
	}
	return &executorpb.CapabilitiesResponse{Tags: c.Tags, RunUntagged: c.RunUntagged, Concurrency: int32(min(c.Concurrency, 1<<30))}, nil
}

func (s *server) Run(req *executorpb.RunRequest, stream grpc.ServerStreamingServer[executorpb.RunEvent]) (err error) {
	defer plugin.Recover(s.log, "Run", &err)
	var mu sync.Mutex // Send is not safe for concurrent use; a careless executor may call trace from two goroutines
	send := func(c TraceChunk) error {
		mu.Lock()
		defer mu.Unlock()
		for data, off := c.Data, c.Offset; len(data) > 0; {
			n := min(len(data), wireChunk)
			if err := stream.Send(&executorpb.RunEvent{Event: &executorpb.RunEvent_Trace{Trace: &executorpb.TraceChunk{Offset: off, Data: data[:n]}}}); err != nil {
				return err
			}
			data, off = data[n:], off+int64(n)
		}
		return nil
	}
	res, err := s.e.Run(stream.Context(), jobFromWire(req.GetJob()), send)
	if err != nil {
		return plugin.Failure(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return stream.Send(&executorpb.RunEvent{Event: &executorpb.RunEvent_Result{Result: resultToWire(res)}})
}

func (s *server) Cancel(ctx context.Context, req *executorpb.CancelRequest) (_ *executorpb.CancelResponse, err error) {
	defer plugin.Recover(s.log, "Cancel", &err)
	if err := s.e.Cancel(ctx, req.GetJobId()); err != nil {
		return nil, plugin.Failure(err)
	}
	return &executorpb.CancelResponse{}, nil
}

// wireChunk is the most data one message of a stream (a trace chunk, a
// piece of an archive) carries, so that its encoded form, a few bytes of
// framing more, fits the 32 KiB tier of gRPC's buffer pool: gRPC marshals
// each message into a pooled buffer of the next tier up (256 B, 4 KiB,
// 16 KiB, 32 KiB, then 1 MiB) and holds it until the transport has written
// it, so a 64 KiB chunk took a 1 MiB buffer, several per busy stream (50
// jobs printing at once held hundreds of MiB). With it a stream holds at
// most about its 64 KiB write quota of 32 KiB buffers, and Send blocks
// beyond that: the job's output waits in its pipe, not in memory.
const wireChunk = 32<<10 - 64

// chunkWriter sends what is written as artifacts chunks of at most
// wireChunk bytes.
type chunkWriter struct {
	stream grpc.ServerStreamingServer[executorpb.ArtifactsChunk]
}

func (w chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		m := min(len(p), wireChunk)
		if err := w.stream.Send(&executorpb.ArtifactsChunk{Data: p[:m]}); err != nil {
			return n, err
		}
		n, p = n+m, p[m:]
	}
	return n, nil
}

func (s *server) Artifacts(req *executorpb.ArtifactsRequest, stream grpc.ServerStreamingServer[executorpb.ArtifactsChunk]) (err error) {
	defer plugin.Recover(s.log, "Artifacts", &err)
	if _, err := s.e.Artifacts(stream.Context(), req.GetJobId(), chunkWriter{stream}); err != nil {
		if errorsIsNoArtifacts(err) {
			return status.Error(codes.NotFound, err.Error())
		}
		return plugin.Failure(fmt.Errorf("artifacts of job %d: %w", req.GetJobId(), err))
	}
	return nil
}

func (s *server) Cleanup(ctx context.Context, req *executorpb.CleanupRequest) (_ *executorpb.CleanupResponse, err error) {
	defer plugin.Recover(s.log, "Cleanup", &err)
	if err := s.e.Cleanup(ctx, req.GetJobId()); err != nil {
		return nil, plugin.Failure(err)
	}
	return &executorpb.CleanupResponse{}, nil
}
