package internal

// The readers of the files a job leaves (cicd.Service): its trace, its
// artifacts archive, and one file out of the archive (GitLab 10.x's
// "download a single artifact file"), by job or from the latest
// successful job of a name on a ref. The archive is the zip the executor
// or runner uploaded; a file is found by its exact name among the
// archive's entries and inflated as it is read. Nothing of the asked path
// reaches the file system, so no name ("../x", "/etc/passwd") can reach
// anything but an entry of that archive.

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// openFile opens the blob at key as it is now: a trace that grows while
// it is read is read up to here (the next read sees the rest). A missing
// blob is notFound.
func (s *Service) openFile(ctx context.Context, key, name string, notFound error) (cicd.File, error) {
	o, err := s.blobs.Open(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return cicd.File{}, notFound
	}
	if err != nil {
		return cicd.File{}, err
	}
	return cicd.File{Name: name, Size: o.Size(), Content: readCloser{o, o.Close}}, nil
}

// readCloser reads from a reader and closes what it was read from.
type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// Trace implements cicd.Service.
func (s *Service) Trace(ctx context.Context, project string, id cicd.JobID) (cicd.File, error) {
	_, j, _, err := s.loadJob(ctx, project, id, projects.ReadJobs)
	if err != nil {
		return cicd.File{}, err
	}
	if j.ErasedAt != nil {
		return cicd.File{}, cicd.ErrNoTrace
	}
	return s.openFile(ctx, traceKey(j.ID), strconv.FormatInt(j.ID, 10)+".log", cicd.ErrNoTrace)
}

// Artifacts implements cicd.Service.
func (s *Service) Artifacts(ctx context.Context, project string, id cicd.JobID) (cicd.File, error) {
	_, j, _, err := s.loadJob(ctx, project, id, projects.ReadJobs)
	if err != nil {
		return cicd.File{}, err
	}
	return s.archive(ctx, j)
}

// archive opens j's artifacts archive.
func (s *Service) archive(ctx context.Context, j *Job) (cicd.File, error) {
	if j.Artifacts == nil {
		return cicd.File{}, cicd.ErrNoArtifacts
	}
	return s.openFile(ctx, artifactsKey(j.ID), j.Artifacts.Filename, cicd.ErrNoArtifacts)
}

// LatestArtifacts implements cicd.Service.
func (s *Service) LatestArtifacts(ctx context.Context, project, ref, job string) (cicd.File, error) {
	j, err := s.latestJob(ctx, project, ref, job)
	if err != nil {
		return cicd.File{}, err
	}
	return s.archive(ctx, j)
}

// latestJob is the newest successful job of a name on a ref of project,
// for the readers of its artifacts.
func (s *Service) latestJob(ctx context.Context, project, ref, name string) (*Job, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, cicd.ErrJobNameRequired
	}
	var found *Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		found, err = latestSuccessful(tx, info.ID, ref, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, cicd.ErrNoArtifacts
	}
	return found, nil
}

// latestSuccessful is the newest successful job of a name on a ref, nil
// when there is none.
func latestSuccessful(tx *store.Tx, projectID int64, ref, name string) (*Job, error) {
	ids, err := jobs.IDsBy(tx, "ref_name", store.IDString(projectID)+"/"+ref+"\x00"+name)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return jobs.Get(tx, ids[len(ids)-1])
}

// ArtifactFile implements cicd.Service.
func (s *Service) ArtifactFile(ctx context.Context, project string, id cicd.JobID, name string) (cicd.File, error) {
	_, j, _, err := s.loadJob(ctx, project, id, projects.ReadJobs)
	if err != nil {
		return cicd.File{}, err
	}
	return s.archiveEntry(ctx, j, name)
}

// LatestArtifactFile implements cicd.Service.
func (s *Service) LatestArtifactFile(ctx context.Context, project, ref, job, name string) (cicd.File, error) {
	j, err := s.latestJob(ctx, project, ref, job)
	if err != nil {
		return cicd.File{}, err
	}
	return s.archiveEntry(ctx, j, name)
}

// archiveEntry opens the regular file named name in j's archive:
// ErrNoArtifacts when the job has no archive (none, erased, expired),
// ErrArtifactFileNotFound when the archive has no such file (a directory
// is none), ErrInvalidArtifactPath for a name that is not UTF-8 or holds
// a NUL. Its name is the entry's base name.
func (s *Service) archiveEntry(ctx context.Context, j *Job, name string) (cicd.File, error) {
	if name == "" || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return cicd.File{}, cicd.ErrInvalidArtifactPath
	}
	if j.Artifacts == nil {
		return cicd.File{}, cicd.ErrNoArtifacts
	}
	f, err := s.blobs.Open(ctx, artifactsKey(j.ID))
	if errors.Is(err, blob.ErrNotFound) {
		return cicd.File{}, cicd.ErrNoArtifacts // removed since the row was read
	}
	if err != nil {
		return cicd.File{}, err
	}
	zr, err := zip.NewReader(f, f.Size())
	if err != nil {
		// Not a zip (a runner may upload another format): no entries.
		f.Close()
		return cicd.File{}, fmt.Errorf("%w: the archive is no zip", cicd.ErrArtifactFileNotFound)
	}
	var entry *zip.File
	for _, e := range zr.File {
		if e.Name == name && e.Mode().IsRegular() {
			entry = e
			break
		}
	}
	if entry == nil {
		f.Close()
		return cicd.File{}, cicd.ErrArtifactFileNotFound
	}
	rc, err := entry.Open()
	if err != nil {
		f.Close()
		// A compression method zip does not know.
		return cicd.File{}, fmt.Errorf("%w: %v", cicd.ErrArtifactFileNotFound, err)
	}
	size := int64(entry.UncompressedSize64)
	// The size the entry declares: a damaged entry that inflates to less
	// ends the read short (an HTTP client sees the length mismatch), one
	// that inflates to more is cut there.
	return cicd.File{Name: path.Base(name), Size: size, Content: readCloser{io.LimitReader(rc, size), func() error {
		rc.Close()
		return f.Close()
	}}}, nil
}
