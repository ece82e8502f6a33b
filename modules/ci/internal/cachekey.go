package internal

// `cache: key: files`: GitLab derives the key on the server from the last
// commits that changed those files (at most two) at the pipeline's
// commit: prefix-SHA1(sorted unique commit ids joined by "-"), or
// prefix-default when none of the files exists; without a prefix the
// prefix and its dash are left out. (GitLab 18 hashes the files' blobs
// instead and keeps the commits for `files_commits`; Fennec keeps the
// commits, which every earlier version used.)

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// maxCacheKeyWalk bounds the history walked for one file of a cache key:
// a file unchanged for longer is keyed by the oldest commit walked that
// still has it as it is now, so the key stays stable until it changes.
const maxCacheKeyWalk = 1000

// resolveCacheKeys sets the key of each of spec's caches that is keyed by
// files, as the pipeline's commit has them.
func (s *Service) resolveCacheKeys(ctx context.Context, projectID int64, sha string, spec *pipeline.Job) {
	resolve := func(c *pipeline.Cache) {
		if len(c.KeyFiles) > 0 {
			c.Key = s.filesCacheKey(ctx, projectID, sha, c.KeyPrefix, c.KeyFiles)
		}
	}
	if spec.Cache != nil {
		c := *spec.Cache
		resolve(&c)
		spec.Cache = &c
	}
	if spec.Caches != nil {
		caches := slices.Clone(spec.Caches)
		for i := range caches {
			resolve(&caches[i])
		}
		spec.Caches = caches
	}
}

// filesCacheKey is GitLab's key of `key: {files, prefix}` at sha.
func (s *Service) filesCacheKey(ctx context.Context, projectID int64, sha, prefix string, files []string) string {
	ctx = readAsCI(ctx)
	var ids []string
	for _, f := range files {
		if strings.TrimSpace(f) == "" {
			continue
		}
		if id := s.lastCommitOf(ctx, projectID, sha, f); id != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	digest := pipeline.DefaultCacheKey
	if len(ids) > 0 {
		sum := sha1.Sum([]byte(strings.Join(ids, "-")))
		digest = hex.EncodeToString(sum[:])
	}
	if prefix == "" {
		return digest
	}
	return prefix + "-" + digest
}

// lastCommitOf is the last commit reachable from sha that changed file
// (git log -1 -- file), "" when sha has no such file; the walk stops after
// maxCacheKeyWalk commits.
func (s *Service) lastCommitOf(ctx context.Context, projectID int64, sha, file string) string {
	file = strings.Trim(path.Clean("/"+file), "/")
	dir, name := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	blobs := map[string]string{} // commit -> the file's blob id there ("" absent)
	blobAt := func(commit string) string {
		if id, ok := blobs[commit]; ok {
			return id
		}
		id := ""
		entries, err := s.git.Tree(ctx, projectID, commit, dir, 0, 0)
		if err == nil {
			for _, e := range entries {
				if e.Name == name && e.Type == gitread.Blob {
					id = e.ID
				}
			}
		}
		blobs[commit] = id
		return id
	}
	want := blobAt(sha)
	if want == "" {
		return ""
	}
	found, oldest := "", sha
	err := s.git.Log(ctx, projectID, gitread.LogQuery{From: []string{sha}, Limit: maxCacheKeyWalk}, func(c gitread.Commit) bool {
		if blobAt(c.ID) != want {
			return true // another branch of the history, with another version
		}
		oldest = c.ID
		for _, parent := range c.ParentIDs {
			if blobAt(parent) == want {
				return true // unchanged here: the change is further back
			}
		}
		found = c.ID
		return false
	})
	if err != nil && !errors.Is(err, context.Canceled) && found == "" {
		return ""
	}
	if found == "" {
		found = oldest
	}
	return found
}
