package gitpack

// Incoming: a received pack held in quarantine until Install moves it into
// objects/pack, or Discard removes it.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Incoming is a received pack held in quarantine (objects/incoming-*),
// invisible to readers of the Store until Install.
type Incoming struct {
	s       *Store
	dir     string // the quarantine directory; "" when nothing was received
	name    string // pack-<sha>; "" for a pack without objects
	objects []Hash // sorted
	trees   []Hash // the objects that are trees, sorted
	p       *pack  // the quarantined pack, for CheckConnected
	mu      sync.Mutex
	done    bool // installed or discarded
}

// Objects are the ids of the objects received (sorted; the bases a thin
// pack was completed with are not among them).
func (in *Incoming) Objects() []Hash { return in.objects }

// Trees are the ids of the received objects that are trees (sorted), for
// checks of their entries before anything is installed.
func (in *Incoming) Trees() []Hash { return in.trees }

// Discard removes the quarantine and everything in it.
func (in *Incoming) Discard() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.done {
		return nil
	}
	in.done = true
	in.p = nil
	if in.dir == "" {
		return nil
	}
	return os.RemoveAll(in.dir)
}

// Install moves the incoming pack into objects/pack and reloads.
func (s *Store) Install(in *Incoming) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.done {
		return errors.New("gitpack: incoming pack already installed or discarded")
	}
	if in.s != s {
		return errors.New("gitpack: incoming pack belongs to another store")
	}
	if in.name != "" {
		if err := os.MkdirAll(s.packDir, 0o755); err != nil {
			return err
		}
		// The .pack first: readers find packs by their .idx.
		for _, ext := range []string{".pack", ".idx"} {
			if err := os.Rename(filepath.Join(in.dir, in.name+ext), filepath.Join(s.packDir, in.name+ext)); err != nil {
				return fmt.Errorf("gitpack: install: %w", err)
			}
		}
		syncDir(s.packDir)
	}
	in.done = true
	in.p = nil
	if in.dir != "" {
		os.RemoveAll(in.dir)
	}
	if in.name == "" {
		return nil
	}
	_, err := s.reload()
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
