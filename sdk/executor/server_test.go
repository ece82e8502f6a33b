package executor

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	executorpb "github.com/fennec-forge/fennec/sdk/executor/proto"
)

// A full message of a stream fits the 32 KiB tier of gRPC's buffer pool:
// one byte more and gRPC marshals it into a 1 MiB buffer.
func TestWireChunkFitsGRPCBufferTier(t *testing.T) {
	data := make([]byte, wireChunk)
	trace := &executorpb.RunEvent{Event: &executorpb.RunEvent_Trace{Trace: &executorpb.TraceChunk{Offset: math.MaxInt64, Data: data}}}
	if n := proto.Size(trace); n > 32<<10 {
		t.Errorf("a trace message of %d bytes of data is %d bytes, more than 32 KiB", wireChunk, n)
	}
	if n := proto.Size(&executorpb.ArtifactsChunk{Data: data}); n > 32<<10 {
		t.Errorf("an artifacts message of %d bytes of data is %d bytes, more than 32 KiB", wireChunk, n)
	}
	if wireChunk > MaxTraceChunk {
		t.Errorf("wireChunk %d is more than MaxTraceChunk", wireChunk)
	}
}
