package fennec

// fennec restore: a backup archive (backup.go) into an empty data
// directory. Nothing is trusted: every entry must be a plain file or
// directory with a clean relative name inside the known layout (the store,
// secret.key, the participants' directories, what each participant's
// Accept takes) and listed in the manifest with its checksum; files are
// written through an os.Root at a staging directory inside the target,
// verified (checksums, the store's pages, each participant's check: the
// repositories' configs and git fsck), and only then moved into place.

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpecsOf are the backup specs of the modules.
func BackupSpecsOf(modules ...Module) []BackupSpec {
	var out []BackupSpec
	for _, m := range modules {
		out = append(out, m.backups...)
	}
	return out
}

// RestoreOptions tune a restore.
type RestoreOptions struct {
	// Force restores into a data directory that is not empty: what the
	// archive holds replaces what is there (the store, secret.key, the
	// participants' directories); nothing else is touched.
	Force bool
	// Specs are the modules' backup specs (BackupSpecsOf): the layout an
	// archive may hold, and the checks of a restored copy.
	Specs []BackupSpec
	// Progress is told what is done (nil: nothing).
	Progress Progress
	// Store is the PostgreSQL database (a postgres:// URL) the archive's
	// store is loaded into; empty for fennec.db in the data directory. A
	// database that holds Fennec data is refused without Force, and
	// emptied with it.
	Store string
}

// RestoreReport is what a restore did.
type RestoreReport struct {
	Manifest *BackupManifest
	Files    int   // files restored
	Dirs     int   // directories restored
	Bytes    int64 // of the files
	// Summary are the participants' lines (repositories checked...).
	Summary []string
}

// ErrNotEmpty is returned by Restore for a data directory that holds
// something, without RestoreOptions.Force.
var ErrNotEmpty = errors.New("the data directory is not empty (use --force to replace its data)")

// maxManifest bounds the manifest read into memory.
const maxManifest = 1 << 30

// decompress returns the archive's tar stream, gunzipped when it is gzip.
func decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// readManifest reads the first entry, which must be the manifest.
func readManifest(tr *tar.Reader) (*BackupManifest, error) {
	hdr, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("not a Fennec backup: %w", err)
	}
	if hdr.Name != manifestName || hdr.Typeflag != tar.TypeReg || hdr.Size > maxManifest {
		return nil, fmt.Errorf("not a Fennec backup: the first entry is %q, not %s", hdr.Name, manifestName)
	}
	var m BackupManifest
	if err := json.NewDecoder(io.LimitReader(tr, maxManifest)).Decode(&m); err != nil {
		return nil, fmt.Errorf("not a Fennec backup: the manifest: %w", err)
	}
	if m.Format < 1 || m.Format > BackupFormat {
		return nil, fmt.Errorf("the archive has format %d; this fennec reads format %d at most", m.Format, BackupFormat)
	}
	return &m, nil
}

// CheckBackupStream copies a backup archive from r to w while reading it as
// it passes: it checks every entry against the manifest's checksums and
// reports progress (the manifest gives the totals). The command line runs
// the archive it writes through it.
func CheckBackupStream(r io.Reader, w io.Writer, p Progress) (*BackupManifest, error) {
	if p == nil {
		p = NoProgress{}
	}
	tee := io.TeeReader(r, w)
	tr := tar.NewReader(tee)
	m, err := readManifest(tr)
	if err != nil {
		return nil, err
	}
	want := map[string]ManifestFile{}
	for _, f := range m.Files {
		want[f.Path] = f
	}
	p.Begin("backup", int64(len(m.Files)), m.Bytes)
	seen := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		f, ok := want[name]
		if !ok {
			return nil, fmt.Errorf("the archive holds %q, which its manifest does not list", hdr.Name)
		}
		seen++
		if f.Dir {
			p.Advance(1, 0)
			continue
		}
		h := sha256.New()
		n, err := io.Copy(h, progressReader{tr, p})
		if err != nil {
			return nil, err
		}
		if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
			return nil, fmt.Errorf("%s does not match its checksum in the manifest", name)
		}
		p.Advance(1, 0)
	}
	p.End()
	if seen != len(m.Files) {
		return nil, fmt.Errorf("the archive holds %d of the %d entries its manifest lists", seen, len(m.Files))
	}
	// The tar's end blocks, and any padding after them.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return nil, err
	}
	return m, nil
}

type progressReader struct {
	r io.Reader
	p Progress
}

func (pr progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.p.Advance(0, int64(n))
	return n, err
}

// Restore restores the archive read from r (tar, or gzip-compressed tar)
// into dataDir, which must be empty (or not exist) unless ro.Force; the
// store goes to dataDir/fennec.db, or into the PostgreSQL database
// ro.Store names. No server may be running on dataDir (nor, for
// PostgreSQL, on the database: the operator stops every node).
func Restore(ctx context.Context, r io.Reader, dataDir string, ro RestoreOptions) (*RestoreReport, error) {
	p := ro.Progress
	if p == nil {
		p = NoProgress{}
	}
	if err := checkTarget(dataDir, ro.Force); err != nil {
		return nil, err
	}
	// The database is checked before anything is extracted, so a refusal
	// costs nothing; it is written only once everything is verified.
	var db store.Engine
	if ro.Store != "" {
		e, err := openPostgres(ctx, ro.Store)
		if err != nil {
			return nil, err
		}
		defer e.Close()
		held, err := store.HoldsData(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("read the PostgreSQL database %s: %w", redactDSN(ro.Store), err)
		}
		if held && !ro.Force {
			return nil, fmt.Errorf("%w: the PostgreSQL database %s (use --force to replace its data; stop every node that uses it first)",
				ErrStoreNotEmpty, redactDSN(ro.Store))
		}
		db = e
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(dataDir, ".restore-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)
	rep, err := extract(ctx, r, staging, ro.Specs, p)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(staging, storeName)); err != nil {
		return nil, errors.New("the archive holds no store (fennec.db)")
	}
	if err := store.Verify(filepath.Join(staging, storeName)); err != nil {
		return nil, fmt.Errorf("the archive's store is damaged: %w", err)
	}
	for _, s := range ro.Specs {
		if s.Verify == nil {
			continue
		}
		lines, err := s.Verify(ctx, staging, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		rep.Summary = append(rep.Summary, lines...)
	}
	// The store first, when it goes to PostgreSQL: of every step it is the
	// one most likely to fail (a lost connection), and the data directory
	// is still as it was if it does.
	if db != nil {
		line, err := loadStore(ctx, filepath.Join(staging, storeName), db, redactDSN(ro.Store))
		if err != nil {
			return nil, err
		}
		rep.Summary = append(rep.Summary, line)
	}
	// Into place: what the archive holds (the store, the key, each
	// participant's directory) replaces what is there of the same name;
	// only with --force can there be any. Nothing else is touched.
	places := []string{secretKeyName}
	if db == nil {
		places = append(places, storeName)
	}
	for _, s := range ro.Specs {
		places = append(places, s.Dirs...)
	}
	for _, rel := range places {
		from := filepath.Join(staging, filepath.FromSlash(rel))
		if _, err := os.Lstat(from); err != nil {
			continue
		}
		dst := filepath.Join(dataDir, filepath.FromSlash(rel))
		if err := os.RemoveAll(dst); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, err
		}
		if err := os.Rename(from, dst); err != nil {
			return nil, err
		}
	}
	if !rep.Manifest.SecretKey {
		p.Notef("warning: the archive holds no secret.key; put the one of the backed-up server at %s, or the sealed secrets (hook tokens, import credentials) cannot be opened",
			filepath.Join(dataDir, secretKeyName))
	}
	return rep, nil
}

// loadStore empties db and copies the verified bbolt file at path into
// it, checking that every bucket arrived whole.
func loadStore(ctx context.Context, path string, db store.Engine, about string) (string, error) {
	staged, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		return "", fmt.Errorf("the archive's store: %w", err)
	}
	defer staged.Close()
	want, err := store.Summarize(ctx, staged.Engine())
	if err != nil {
		return "", fmt.Errorf("the archive's store: %w", err)
	}
	if err := store.Empty(ctx, db); err != nil {
		return "", fmt.Errorf("empty the PostgreSQL database %s: %w", about, err)
	}
	rep := &CopyReport{}
	if err := copyAndVerify(ctx, staged.Engine(), db, want, rep); err != nil {
		return "", fmt.Errorf("load the store into the PostgreSQL database %s: %w (it holds part of the archive now: restore again with --force)", about, err)
	}
	return fmt.Sprintf("store: loaded into the PostgreSQL database %s (%d buckets, %d keys), verified", about, rep.Buckets, rep.Keys), nil
}

// checkTarget refuses a data directory in use, or not empty without force.
func checkTarget(dataDir string, force bool) error {
	entries, err := os.ReadDir(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dataDir, storeName)); err == nil {
		db, err := openIdleStore(dataDir)
		if err != nil {
			if errors.Is(err, store.ErrLocked) {
				return errors.New("a server is running on this data directory: stop it first")
			}
			// A damaged store is replaced like any other.
		} else {
			_ = db.Close()
		}
	}
	// A server whose store is not the file (PostgreSQL) holds no lock on
	// it; its admin socket tells it runs.
	if adminSocketAnswers(dataDir) {
		return errors.New("a server is running on this data directory: stop it first")
	}
	if len(entries) > 0 && !force {
		return ErrNotEmpty
	}
	return nil
}

// allowed says whether name (clean, relative) belongs to the layout.
func allowed(name string, specs []BackupSpec) bool {
	if name == storeName || name == secretKeyName {
		return true
	}
	for _, s := range specs {
		for _, d := range s.Dirs {
			if name == d || strings.HasPrefix(name, d+"/") {
				return true
			}
		}
	}
	return false
}

// accepted asks the participant whose directory holds name whether it
// writes such an entry there (BackupSpec.Accept).
func accepted(name string, dir bool, specs []BackupSpec) error {
	for _, s := range specs {
		for _, d := range s.Dirs {
			if (name == d || strings.HasPrefix(name, d+"/")) && s.Accept != nil {
				if err := s.Accept(name, dir); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// extract writes the archive's entries under staging, checking each.
func extract(ctx context.Context, r io.Reader, staging string, specs []BackupSpec, p Progress) (*RestoreReport, error) {
	in, err := decompress(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(in)
	m, err := readManifest(tr)
	if err != nil {
		return nil, err
	}
	want := map[string]ManifestFile{}
	for _, f := range m.Files {
		if !cleanRelative(f.Path) || !allowed(f.Path, specs) {
			return nil, fmt.Errorf("refused: the manifest lists %q, outside the data directory's layout", f.Path)
		}
		if err := accepted(f.Path, f.Dir, specs); err != nil {
			return nil, fmt.Errorf("refused: %w", err)
		}
		want[f.Path] = f
	}
	root, err := os.OpenRoot(staging)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rep := &RestoreReport{Manifest: m}
	seen := map[string]bool{}
	p.Begin("restore", int64(len(m.Files)), m.Bytes)
	defer p.End()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the archive: %w", err)
		}
		name := hdr.Name
		if hdr.Typeflag == tar.TypeDir {
			name = strings.TrimSuffix(name, "/")
		}
		if !cleanRelative(name) {
			return nil, fmt.Errorf("refused: the entry %q is not a clean relative path", hdr.Name)
		}
		if !allowed(name, specs) {
			return nil, fmt.Errorf("refused: the entry %q is outside the data directory's layout", hdr.Name)
		}
		f, listed := want[name]
		if !listed || seen[name] {
			return nil, fmt.Errorf("refused: the entry %q is not in the manifest, or comes twice", hdr.Name)
		}
		seen[name] = true
		switch hdr.Typeflag {
		case tar.TypeDir:
			if !f.Dir {
				return nil, fmt.Errorf("refused: %q is a directory, a file in the manifest", name)
			}
			if err := root.MkdirAll(name, 0o700); err != nil {
				return nil, err
			}
			rep.Dirs++
			p.Advance(1, 0)
		case tar.TypeReg:
			if f.Dir || hdr.Size != f.Size {
				return nil, fmt.Errorf("refused: %q is not the file of %d bytes the manifest lists", name, f.Size)
			}
			if err := writeEntry(root, name, tr, f, p); err != nil {
				return nil, err
			}
			rep.Files++
			rep.Bytes += f.Size
			p.Advance(1, 0)
		default:
			// Links (symbolic or hard), devices, FIFOs: a backup never
			// holds one, and a link could point anywhere.
			return nil, fmt.Errorf("refused: the entry %q is not a plain file or directory (type %q)", hdr.Name, hdr.Typeflag)
		}
	}
	if len(seen) != len(want) {
		for _, f := range m.Files {
			if !seen[f.Path] {
				return nil, fmt.Errorf("the archive is incomplete: %q is in the manifest but not in the archive", f.Path)
			}
		}
	}
	return rep, nil
}

// writeEntry writes one file and checks its checksum.
func writeEntry(root *os.Root, name string, r io.Reader, f ManifestFile, p Progress) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	// Everything in a data directory is the server account's alone (the
	// store, the key, SSH host keys, repositories): owner-only, whatever
	// the archive's headers say.
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), progressReader{io.LimitReader(r, f.Size), p})
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("%s does not match its checksum in the manifest: the archive is damaged", name)
	}
	return nil
}
