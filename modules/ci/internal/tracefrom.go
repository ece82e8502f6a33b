package internal

// The trace from a byte offset, for the job page's live log: a poll reads
// only what it has not had, whatever the log's size.

import (
	"context"
	"errors"
	"io"

	"github.com/fennec-forge/fennec/core/blob"
	"strconv"

	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// TraceFrom is the job's trace as Trace reads it, from offset on: Size is
// the whole trace's size now, Content its bytes from offset (none past
// the end).
func (s *Service) TraceFrom(ctx context.Context, project string, id cicd.JobID, offset int64) (cicd.File, error) {
	_, j, _, err := s.loadJob(ctx, project, id, projects.ReadJobs)
	if err != nil {
		return cicd.File{}, err
	}
	if j.ErasedAt != nil {
		return cicd.File{}, cicd.ErrNoTrace
	}
	f, err := s.blobs.Open(ctx, traceKey(j.ID))
	if errors.Is(err, blob.ErrNotFound) {
		return cicd.File{}, cicd.ErrNoTrace
	}
	if err != nil {
		return cicd.File{}, err
	}
	size := f.Size()
	offset = min(max(offset, 0), size)
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return cicd.File{}, err
	}
	return cicd.File{Name: strconv.FormatInt(j.ID, 10) + ".log", Size: size,
		Content: readCloser{io.LimitReader(f, size-offset), f.Close}}, nil
}
