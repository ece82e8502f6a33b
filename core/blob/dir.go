package blob

// Dir: a Store on a directory. A key is the path of a file under it, so an
// existing directory of files is read as it is. Every access goes through
// an os.Root at the directory: besides CheckKey, a symbolic link planted
// inside cannot lead a key out of it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
	"time"
)

// tmpPrefix begins the names of files being written; CheckKey refuses
// segments beginning with a dot, so no key names one, and List skips them
// (a crash leaves them behind, for the operator or a later sweep).
const tmpPrefix = ".blob-"

// Dir is a Store keeping each object as a file under root. The
// filesystem must provide atomic rename within a directory, exclusive
// creation (link failing on an existing name) and fsync of files and
// directories (core/shareddir.go checks them when nodes share it).
// Appends to one key are serialised within the process; across
// processes, one key has one writer (a job's trace is written by the node
// running the job or answering its runner).
type Dir struct {
	root  string
	seed  maphash.Seed
	locks [64]sync.Mutex
}

// NewDir returns the Store on root (made when first used).
func NewDir(root string) *Dir {
	return &Dir{root: root, seed: maphash.MakeSeed()}
}

func (d *Dir) open() (*os.Root, error) {
	r, err := os.OpenRoot(d.root)
	if errors.Is(err, fs.ErrNotExist) {
		// Made on first use, as the files under it were before the seam.
		if err := os.MkdirAll(d.root, 0o700); err != nil {
			return nil, fmt.Errorf("blob: %w", err)
		}
		r, err = os.OpenRoot(d.root)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return r, nil
}

func (d *Dir) lock(key string) func() {
	mu := &d.locks[maphash.String(d.seed, key)%uint64(len(d.locks))]
	mu.Lock()
	return mu.Unlock
}

// Put implements Store: a temporary file beside the object, synced, then
// renamed over it, and the directory synced.
func (d *Dir) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	return d.write(ctx, key, r, false)
}

// Create implements Store: as Put, with a link in place of the rename, so
// that an existing object is never replaced.
func (d *Dir) Create(ctx context.Context, key string, r io.Reader) (int64, error) {
	return d.write(ctx, key, r, true)
}

func (d *Dir) write(ctx context.Context, key string, r io.Reader, exclusive bool) (size int64, err error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	root, err := d.open()
	if err != nil {
		return 0, err
	}
	defer root.Close()
	dir := path.Dir(key)
	made := missingDirs(root, dir)
	defer func() {
		if err != nil {
			// A failed write leaves no directory it made (an upload's
			// own directory): deepest first, each only when empty.
			for _, d := range made {
				_ = root.Remove(d)
			}
		}
	}()
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	tmp := path.Join(dir, tmpPrefix+randomName()+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		_ = root.Remove(tmp) // gone already once renamed
	}()
	size, err = io.Copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	f = nil
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	if exclusive {
		err = root.Link(tmp, key)
		if errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("blob: %s: %w", key, ErrExist)
		}
	} else {
		err = root.Rename(tmp, key)
	}
	if err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	if err := syncDir(root, dir); err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	return size, nil
}

// Append implements Store: O_APPEND after checking the size, synced; a
// failed write is cut back to offset.
func (d *Dir) Append(ctx context.Context, key string, offset int64, data []byte) (int64, error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	unlock := d.lock(key)
	defer unlock()
	root, err := d.open()
	if err != nil {
		return 0, err
	}
	defer root.Close()
	dir := path.Dir(key)
	if offset == 0 {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return 0, fmt.Errorf("blob: %s: %w", key, err)
		}
	}
	flags := os.O_WRONLY | os.O_APPEND
	if offset == 0 {
		flags |= os.O_CREATE // only an append at 0 makes the object
	}
	f, err := root.OpenFile(key, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, &OffsetError{Size: 0}
	}
	if err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("blob: %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("blob: %s: not a regular file", key)
	}
	size := st.Size()
	if size != offset {
		return size, &OffsetError{Size: size}
	}
	if len(data) > 0 {
		if _, err := f.Write(data); err != nil {
			_ = f.Truncate(offset)
			return offset, fmt.Errorf("blob: %s: %w", key, err)
		}
	}
	if err := f.Sync(); err != nil {
		return offset, fmt.Errorf("blob: %s: %w", key, err)
	}
	if offset == 0 {
		// The file may be new: its name must survive a crash too.
		if err := syncDir(root, dir); err != nil {
			return 0, fmt.Errorf("blob: %s: %w", key, err)
		}
	}
	return offset + int64(len(data)), nil
}

// Open implements Store.
func (d *Dir) Open(ctx context.Context, key string) (Object, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	root, err := d.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(key)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrInvalid) {
		return nil, fmt.Errorf("blob: %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("blob: %s: %w", key, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob: %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("blob: %s: %w", key, ErrNotFound)
	}
	return &fileObject{SectionReader: io.NewSectionReader(f, 0, st.Size()), f: f, mod: st.ModTime()}, nil
}

// Delete implements Store.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	root, err := d.open()
	if err != nil {
		return err
	}
	defer root.Close()
	st, err := root.Lstat(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && st.IsDir() {
		return nil // a prefix, not an object
	}
	if err := root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: %s: %w", key, err)
	}
	return syncDir(root, path.Dir(key))
}

// DeletePrefix implements Store.
func (d *Dir) DeletePrefix(ctx context.Context, prefix string) error {
	if err := CheckKey(prefix); err != nil {
		return err
	}
	root, err := d.open()
	if err != nil {
		return err
	}
	defer root.Close()
	st, err := root.Lstat(prefix)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
		return nil // nothing under it (an object of that name is not)
	}
	if err := root.RemoveAll(prefix); err != nil {
		return fmt.Errorf("blob: %s: %w", prefix, err)
	}
	return syncDir(root, path.Dir(prefix))
}

// List implements Store: the regular files under the prefix's directory,
// leaving out hidden names (files being written) and symbolic links.
func (d *Dir) List(ctx context.Context, prefix string) ([]Entry, error) {
	if err := CheckKey(prefix); err != nil {
		return nil, err
	}
	root, err := d.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if st, err := root.Lstat(prefix); errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
		return nil, nil
	}
	var out []Entry
	err = fs.WalkDir(root.FS(), prefix, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p != prefix && e.Name()[0] == '.' {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		out = append(out, Entry{Key: p, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob: list %s: %w", prefix, err)
	}
	return out, nil
}

// missingDirs are dir and those of its parents that do not exist yet,
// deepest first.
func missingDirs(root *os.Root, dir string) []string {
	var out []string
	for d := dir; d != "."; d = path.Dir(d) {
		if _, err := root.Lstat(d); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

// syncDir makes a directory's entries (a rename, a new or removed name)
// durable.
func syncDir(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func randomName() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// fileObject is an open file read up to its size at Open.
type fileObject struct {
	*io.SectionReader
	f   *os.File
	mod time.Time
}

func (o *fileObject) ModTime() time.Time { return o.mod }
func (o *fileObject) Close() error       { return o.f.Close() }

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

var _ Store = (*Dir)(nil)
