package fennec

// The backup contract: what a module gives to `fennec backup` and
// `fennec restore`. The core knows no module's files: each module that
// keeps files in the data directory declares them (BackupSpec, read
// without assembling an app, so restore knows the layout) and provides a
// BackupParticipant that lists them at the backup's point in time.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpec is what the command line knows of a module's share of a
// backup before any app is assembled.
type BackupSpec struct {
	// Name names the participant (as BackupParticipant.Name).
	Name string
	// Dirs are the directories of the data directory that hold the
	// module's files, slash-separated and relative ("repositories",
	// "ci/traces"). A restore writes only there (and the store, the
	// manifest and secret.key): an archive entry anywhere else is refused.
	Dirs []string
	// Accept (optional) says whether an entry the archive lists under Dirs
	// (slash-separated, relative to the data directory) is one the module
	// writes there; an error, which names the entry and why it is refused,
	// refuses the whole archive before anything is written. Archives are not
	// trusted: a file a module never writes may still be one a program run
	// on the restored data would act on (a git hook, a git config).
	Accept func(path string, dir bool) error
	// Verify (optional) checks a restored data directory (dataDir is where
	// the files were extracted, before they are moved into place); an error
	// fails the restore. It reports its progress and warnings to p, and
	// returns lines for the restore's summary.
	Verify func(ctx context.Context, dataDir string, p Progress) (summary []string, err error)
}

// BackupParticipant is a module's part in a backup, built by the module's
// constructor (ProvideBackupParticipants).
//
// A backup runs Hold of every participant, opens one read transaction of
// the store, calls Capture of every participant inside it, calls every
// thaw, writes the store snapshot from that same transaction, then archives
// the captured files and finally calls every end. So what Capture lists
// agrees with the store snapshot as long as Hold keeps out every write that
// must agree with the store.
type BackupParticipant struct {
	Name string
	// Hold (optional) waits until the participant may be backed up and
	// holds off, until thaw, the writes that must agree with the store (the
	// repository module's ref updates: the backup holds them only for the
	// instant of the capture), and until end, what would remove or rewrite
	// files already listed (housekeeping). The core calls thaw and end
	// exactly once each, whatever happens.
	Hold func(ctx context.Context) (thaw, end func(), err error)
	// Capture lists the files to archive as they are now; tx is the read
	// transaction the store snapshot is written from.
	Capture func(ctx context.Context, tx *store.Tx) (BackupCapture, error)
}

// BackupCapture is what a participant's Capture found.
type BackupCapture struct {
	Files []BackupFile
	// Counts are added to the manifest's counts ("repositories": 3).
	Counts map[string]int64
}

// BackupFile is one entry of the archive.
type BackupFile struct {
	// Path is slash-separated and relative to the data directory; it must
	// lie under one of the participant's BackupSpec.Dirs.
	Path string
	// Dir marks a directory (archived so that empty ones come back: a bare
	// repository needs its refs/ and objects/).
	Dir bool
	// Size is how many bytes of the file to archive: a file that grows
	// meanwhile (a running job's trace) is archived as it was.
	Size int64
	// Data, when not nil, is the content, taken in memory at the capture
	// (refs, which change in place); the file is not read again.
	Data []byte
}

const groupBackup = `group:"fennec.backup,flatten"`

// BackupParticipants is what ProvideBackupParticipants returns: an fx
// option that NewModule also reads, so restore knows the layout without
// assembling an app.
type BackupParticipants struct {
	fx.Option
	specs []BackupSpec
}

// ProvideBackupParticipants adds a constructor returning
// []BackupParticipant and declares them (each one built must be declared,
// and the other way round; New checks).
func ProvideBackupParticipants[D any](ctor func(D) []BackupParticipant, specs ...BackupSpec) BackupParticipants {
	return BackupParticipants{Option: fx.Provide(fx.Annotate(ctor, fx.ResultTags(groupBackup))), specs: specs}
}

// BackupSpecs are the backup participants of the module.
func (m Module) BackupSpecs() []BackupSpec { return m.backups }

type backupParams struct {
	fx.In
	Participants []BackupParticipant `group:"fennec.backup"`
}

// checkBackupParticipants refuses a participant built but not declared,
// declared but not built, or declaring a directory that is not a clean
// relative path.
func checkBackupParticipants(specs []BackupSpec, built []BackupParticipant) error {
	declared := map[string]bool{}
	for _, s := range specs {
		for _, d := range s.Dirs {
			if !cleanRelative(d) || isReservedName(d) {
				return fmt.Errorf("fennec: backup participant %q: directory %q is not a clean relative path of its own", s.Name, d)
			}
		}
		declared[s.Name] = true
	}
	for _, p := range built {
		if !declared[p.Name] {
			return fmt.Errorf("fennec: backup participant %q is not declared in ProvideBackupParticipants", p.Name)
		}
		if p.Capture == nil {
			return fmt.Errorf("fennec: backup participant %q has no Capture", p.Name)
		}
		delete(declared, p.Name)
	}
	for name := range declared {
		return fmt.Errorf("fennec: backup participant %q is declared but not provided", name)
	}
	return nil
}

// cleanRelative: a slash-separated relative path without ".", ".." or
// empty elements.
func cleanRelative(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) || path.Clean(p) != p {
		return false
	}
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			return false
		}
	}
	return true
}

// Progress receives what a long operation (backup, restore, a repack) has
// done: a progress bar on a terminal, plain lines otherwise.
type Progress interface {
	// Begin starts a phase of items and bytes to do (0 when unknown).
	Begin(phase string, items, bytes int64)
	// Advance counts items and bytes done in the current phase.
	Advance(items, bytes int64)
	// End ends the current phase.
	End()
	// Notef prints a line (a warning, a result) without breaking the bar.
	Notef(format string, args ...any)
}

// NoProgress discards progress.
type NoProgress struct{}

func (NoProgress) Begin(string, int64, int64) {}
func (NoProgress) Advance(int64, int64)       {}
func (NoProgress) End()                       {}
func (NoProgress) Notef(string, ...any)       {}

// CaptureTree lists the directory rel of dataDir (slash-separated) for a
// participant's Capture: its directories, and its regular files at their
// current sizes; symbolic links and anything else are left out, and so is
// every entry whose base name skip matches (temporary files). A missing
// directory lists nothing. files counts the regular files.
func CaptureTree(dataDir, rel string, skip func(name string) bool) (out []BackupFile, files int64, err error) {
	root := filepath.Join(dataDir, filepath.FromSlash(rel))
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile, or never made
			}
			return err
		}
		if p != root && skip != nil && skip(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		r, err := filepath.Rel(dataDir, p)
		if err != nil {
			return err
		}
		r = filepath.ToSlash(r)
		switch {
		case d.IsDir():
			out = append(out, BackupFile{Path: r, Dir: true})
		case d.Type().IsRegular():
			fi, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			out = append(out, BackupFile{Path: r, Size: fi.Size()})
			files++
		}
		return nil
	})
	return out, files, err
}
