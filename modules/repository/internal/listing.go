package internal

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5"
)

// listingFS is the file system go-git's object storage reads a repository
// through: go-billy's own ReadDir fails as a whole when an entry it listed
// is gone before it is stat'ed, and go-git takes that not-exist error for
// "objects/pack does not exist", so the storage sees no pack at all, for
// its whole life (a merge request answered "404 Commit Not Found" for a
// commit that was there). Entries vanish there all the time: go-git writes
// every loose object (a merge commit, a merge check's trees) as a
// tmp_obj_* file in objects/pack and renames it away. Here an entry that
// vanished is left out, as if the listing had come a moment later.
type listingFS struct{ billy.Filesystem }

// ReadDir lists dir (relative to the repository), sorted by name, without
// the entries removed or renamed while it was listed.
func (l listingFS) ReadDir(dir string) ([]os.FileInfo, error) {
	return readDirSkippingVanished(filepath.Join(l.Root(), dir), nil)
}

// readDirSkippingVanished is ReadDir over an absolute path; vanish, when
// set, runs between the listing and the stat of its entries (tests).
func readDirSkippingVanished(dir string, vanish func()) ([]os.FileInfo, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if vanish != nil {
		vanish()
	}
	infos := make([]os.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, fi)
	}
	return infos, nil
}
