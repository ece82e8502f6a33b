package fennec

// The files modules keep (traces, artifacts, reports, uploads, SSH host
// keys) go through one blob.Store at the data directory. A key is the
// path it had before the seam, so a data directory keeps working as it
// is; the store takes only keys under the directories modules declare to
// backups (BackupSpec.Dirs), so every object is in a backup and no key
// reaches the core's own files (the database, the secret key).
// Repositories stay plain directories: git needs a filesystem.

import (
	"context"
	"slices"

	"github.com/fennec-forge/fennec/core/blob"
)

// newBlobs is the Store modules are given.
func newBlobs(dataDir string, modules []Module) blob.Store {
	var dirs []string
	for _, m := range modules {
		for _, spec := range m.backups {
			dirs = append(dirs, spec.Dirs...)
		}
	}
	slices.Sort(dirs)
	return blob.Under(blob.NewDir(dataDir), slices.Compact(dirs)...)
}

// CaptureBlobs lists the objects under prefix for a participant's Capture,
// at their current sizes (a trace that grows meanwhile is archived as it
// was). Their paths are their keys: the core's Store keeps a key at that
// path of the data directory. files counts them.
func CaptureBlobs(ctx context.Context, blobs blob.Store, prefix string) (out []BackupFile, files int64, err error) {
	list, err := blobs.List(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	for _, e := range list {
		out = append(out, BackupFile{Path: e.Key, Size: e.Size})
	}
	return out, int64(len(out)), nil
}
