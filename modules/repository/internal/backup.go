package internal

// The repository module's share of a backup. Refs are files and their
// push events are rows, so a backup must see both at one point: every
// change of refs (and every creation, fork or removal of a repository)
// takes Storage.refWrites shared, and the backup takes it exclusively for
// the instant it opens the store's read transaction and reads every
// repository's refs into memory (capture). A push is then wholly before
// that point or wholly after it: its ref journal entry (refjournal.go)
// and its refs are in the snapshot together, and the restored server's
// start replays the journal into the push event if the snapshot came
// between the refs and the event. Objects come before refs, so the refs
// captured never name an object the archive lacks; objects of a push that
// lands after the point may be archived, unreferenced.
//
// Objects are never rewritten in place; only a repack (old packs) and a
// project's removal delete files, and both wait for the end of a backup
// (Storage.removals), so every file listed is still there when it is read.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// BackupSpec declares the repositories to backups and restores.
// A restore takes only the files Fennec writes in a repository (Accept),
// and checks and rewrites what git would act on before git fsck (Verify).
var BackupSpec = fennec.BackupSpec{Name: "repository", Dirs: []string{"repositories"}, Accept: acceptEntry, Verify: verifyRestored}

// SSHBackupSpec declares the SSH server's host keys: a restored server
// that made new ones would greet every client with a changed host key.
var SSHBackupSpec = fennec.BackupSpec{Name: "ssh", Dirs: []string{"ssh"}}

// BackupParticipantsDeps are what BackupParticipants is built from.
type BackupParticipantsDeps struct {
	fennec.In
	Storage *Storage
	State   projects.RepositoryState
	Blobs   blob.Store
}

// BackupParticipants are the repository module's participants: the
// repositories, and the SSH host keys (written once, never changed).
func BackupParticipants(d BackupParticipantsDeps) []fennec.BackupParticipant {
	st, state := d.Storage, d.State
	return []fennec.BackupParticipant{{
		Name: "repository",
		Hold: func(ctx context.Context) (thaw, end func(), err error) {
			st.removals.Lock()
			st.refWrites.Lock()
			return st.refWrites.Unlock, st.removals.Unlock, nil
		},
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			ids, err := state.ProjectIDs(tx.Context())
			if err != nil {
				return fennec.BackupCapture{}, err
			}
			var files []fennec.BackupFile
			var repos, missing int64
			for _, id := range ids {
				p := st.Path(id)
				if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
					missing++ // made lazily on first use, or lost: nothing to archive
					continue
				}
				fs, err := st.captureRepo(p)
				if err != nil {
					return fennec.BackupCapture{}, fmt.Errorf("project %d: %w", id, err)
				}
				files = append(files, fs...)
				repos++
			}
			counts := map[string]int64{"repositories": repos}
			if missing > 0 {
				counts["repositories_not_on_disk"] = missing
			}
			return fennec.BackupCapture{Files: files, Counts: counts}, nil
		},
	}, {
		Name: "ssh",
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			files, n, err := fennec.CaptureBlobs(ctx, d.Blobs, "ssh")
			return fennec.BackupCapture{Files: files, Counts: map[string]int64{"ssh_host_keys": n}}, err
		},
	}}
}

// captureRepo lists one bare repository: everything outside objects/
// (refs, HEAD, packed-refs, config: small, and changed in place or by
// rename) read into memory now; objects by name and size, read later.
// Lock files and the temporary files of a push or a repack are left out.
func (s *Storage) captureRepo(repo string) ([]fennec.BackupFile, error) {
	var out []fennec.BackupFile
	objects := filepath.Join(repo, "objects")
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != repo && (strings.HasSuffix(name, ".lock") || strings.HasPrefix(name, "incoming-") ||
			strings.HasPrefix(name, "fennec-stream-") || strings.HasPrefix(name, "tmp_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		arch := "repositories/" + filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out = append(out, fennec.BackupFile{Path: arch, Dir: true})
		case !d.Type().IsRegular():
			// no symbolic links in a repository made here; never follow one
		case strings.HasPrefix(p, objects+string(filepath.Separator)):
			fi, err := d.Info()
			if err != nil {
				return err
			}
			out = append(out, fennec.BackupFile{Path: arch, Size: fi.Size()})
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, fennec.BackupFile{Path: arch, Data: b})
		}
		return nil
	})
	return out, err
}

// verifyRestored checks every restored repository before anything is moved
// into place: the layout again (acceptEntry took each entry the archive
// listed; this walks what is on disk), HEAD, and the archive's config,
// which is then replaced by Fennec's own (layout.go); then git fsck, run
// with a neutral configuration (neutralGit), since the objects and refs
// are still the archive's.
func verifyRestored(ctx context.Context, dataDir string, p fennec.Progress) ([]string, error) {
	repos, err := checkRestoredLayout(dataDir)
	if err != nil {
		return nil, err
	}
	if len(repos) == 0 {
		return []string{"repositories: none"}, nil
	}
	for _, r := range repos {
		rel, _ := filepath.Rel(dataDir, r)
		rel = filepath.ToSlash(rel)
		head, err := readSmall(filepath.Join(r, "HEAD"))
		if err != nil {
			return nil, fmt.Errorf("refused: %s/HEAD: %w", rel, err)
		}
		if err := checkHEAD(head); err != nil {
			return nil, fmt.Errorf("refused: %s/HEAD: %w", rel, err)
		}
		cfg := filepath.Join(r, "config")
		b, err := readSmall(cfg)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("refused: %s/config: %w", rel, err)
		}
		if err := checkRepoConfig(b); err != nil {
			return nil, fmt.Errorf("refused: %s/config: %w; %s", rel, err, keepsOnly)
		}
		// Fennec's own config, not the archive's, even when it says the
		// same: git reads no byte of the archive's.
		if err := os.Remove(cfg); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := writeNew(cfg, []byte(repoConfig)); err != nil {
			return nil, err
		}
	}
	git, err := exec.LookPath("git")
	if err != nil {
		p.Notef("warning: git is not installed: the %d restored repositories were not checked with git fsck", len(repos))
		return []string{fmt.Sprintf("repositories: %d restored, not checked (no git)", len(repos))}, nil
	}
	start := time.Now()
	p.Begin("git fsck", int64(len(repos)), 0)
	defer p.End()
	for _, r := range repos {
		cmd := neutralGit(ctx, git, r, "fsck", "--no-progress", "--no-dangling")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			rel, _ := filepath.Rel(dataDir, r)
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return nil, fmt.Errorf("git fsck of %s failed: %s", rel, strings.TrimSpace(buf.String()))
			}
			return nil, fmt.Errorf("git fsck of %s: %w", rel, err)
		}
		p.Advance(1, 0)
	}
	return []string{fmt.Sprintf("repositories: %d restored, git fsck clean (%s)", len(repos), time.Since(start).Round(time.Millisecond))}, nil
}

// checkRestoredLayout walks the restored repositories/ and returns the
// repositories' directories; anything acceptEntry refuses, or that is
// neither a plain file nor a directory, fails it, and so does a repository
// without HEAD.
func checkRestoredLayout(dataDir string) ([]string, error) {
	var repos []string
	root := filepath.Join(dataDir, "repositories")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("refused: %s is not a plain file or directory", name)
		}
		if err := acceptEntry(name, d.IsDir()); err != nil {
			return fmt.Errorf("refused: %w", err)
		}
		if d.IsDir() && strings.Count(name, "/") == 4 {
			if fi, err := os.Lstat(filepath.Join(p, "HEAD")); err != nil || !fi.Mode().IsRegular() {
				return fmt.Errorf("refused: %s holds no HEAD: not a repository", name)
			}
			repos = append(repos, p)
		}
		return nil
	})
	return repos, err
}

// writeNew writes a file that must not exist yet, durably.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
