package internal

// The listing of a job's artifacts archive, for the artifacts browser
// page: the entries directly under a directory of the zip, directories
// first. Like archiveEntry, it reads names out of the archive and nothing
// of the asked path reaches the file system.

import (
	"archive/zip"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ArtifactEntry is a file or a directory of an artifacts archive.
type ArtifactEntry struct {
	// Path is the entry's path in the archive, without a trailing slash.
	Path string
	Name string
	Dir  bool
	// Size is a file's inflated size; a directory's is its files'.
	Size int64
}

// ArtifactDir lists the entries directly under dir ("" for the archive's
// top, "out/sub" below) of the job's archive: ErrNoArtifacts without an
// archive, ErrArtifactFileNotFound for a directory the archive does not
// have (or a path that is no clean relative path: "..", "a//b").
func (s *Service) ArtifactDir(ctx context.Context, project string, id cicd.JobID, dir string) ([]ArtifactEntry, error) {
	_, j, _, err := s.loadJob(ctx, project, id, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	if dir != "" && !cleanArchivePath(dir) {
		return nil, cicd.ErrArtifactFileNotFound
	}
	if j.Artifacts == nil {
		return nil, cicd.ErrNoArtifacts
	}
	f, err := s.blobs.Open(ctx, artifactsKey(j.ID))
	if errors.Is(err, blob.ErrNotFound) {
		return nil, cicd.ErrNoArtifacts
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := zip.NewReader(f, f.Size())
	if err != nil {
		return nil, cicd.ErrArtifactFileNotFound // not a zip: nothing to list
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	found := dir == ""
	byName := map[string]*ArtifactEntry{}
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, "/")
		if !strings.HasPrefix(f.Name, prefix) || !cleanArchivePath(name) {
			continue
		}
		rest := strings.TrimPrefix(f.Name, prefix)
		if rest == "" {
			found = true // the directory's own entry
			continue
		}
		found = true
		first, _, isDir := strings.Cut(rest, "/")
		e := byName[first]
		if e == nil {
			e = &ArtifactEntry{Path: prefix + first, Name: first, Dir: isDir}
			byName[first] = e
		}
		if isDir || f.Mode().IsRegular() {
			e.Size += int64(f.UncompressedSize64)
		}
	}
	if !found {
		return nil, cicd.ErrArtifactFileNotFound
	}
	out := make([]ArtifactEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b ArtifactEntry) int {
		if a.Dir != b.Dir {
			if a.Dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// cleanArchivePath: a relative path of named segments, none "." or "..".
func cleanArchivePath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
