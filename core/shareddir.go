package fennec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// checkSharedDir checks, when nodes share a store, that the data directory
// behaves as they need a shared filesystem to: repositories, traces,
// artifacts, uploads and SSH host keys are written by one node and read by
// the others, through exclusive creation (O_EXCL: two nodes making the
// same host key or lock file), fsync (nothing acknowledged lost when a
// node dies) and atomic rename (a reader sees the old file or the new,
// never half). NFS v4 and CephFS provide these; a directory that is not
// shared at all passes too, and is the operator's to get right: the README
// says what the nodes must share.
func checkSharedDir(dir string) error {
	probe := filepath.Join(dir, ".fennec-fs-check-"+strconv.Itoa(os.Getpid()))
	defer os.Remove(probe)
	defer os.Remove(probe + ".renamed")
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("shared data directory %s: exclusive create: %w", dir, err)
	}
	if _, err := f.WriteString("fennec"); err != nil {
		f.Close()
		return fmt.Errorf("shared data directory %s: write: %w", dir, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("shared data directory %s: fsync: %w", dir, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("shared data directory %s: %w", dir, err)
	}
	if _, err := os.OpenFile(probe, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("shared data directory %s: a second exclusive create of one file did not fail (%v): O_EXCL is not honoured", dir, err)
	}
	if err := os.Rename(probe, probe+".renamed"); err != nil {
		return fmt.Errorf("shared data directory %s: rename: %w", dir, err)
	}
	b, err := os.ReadFile(probe + ".renamed")
	if err != nil || string(b) != "fennec" {
		return fmt.Errorf("shared data directory %s: a renamed file does not read back (%v)", dir, err)
	}
	if _, err := os.Stat(probe); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("shared data directory %s: the old name is still there after a rename", dir)
	}
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("shared data directory %s: fsync of the directory: %w", dir, err)
		}
	}
	return nil
}
