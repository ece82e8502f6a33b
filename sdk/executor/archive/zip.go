package archive

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrTooLarge: an archive passed its size cap while being written, or an
// archive being extracted would write more than its cap.
var ErrTooLarge = errors.New("archive: too large")

// ErrUnsafeEntry: a zip entry's name would put it outside the target
// directory (an absolute name, "..", or a path through a symbolic link
// leaving it).
var ErrUnsafeEntry = errors.New("archive: entry outside the target directory")

// counter counts what passes through it and fails past a limit.
type counter struct {
	w     io.Writer
	n     int64
	limit int64
}

func (c *counter) Write(p []byte) (int, error) {
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, c.limit)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Write writes sel's files and directories under root to w as a zip and
// returns its size. With limit > 0 it stops with ErrTooLarge once the zip
// would pass limit bytes. Files are opened through an os.Root, so a path
// swapped for a symbolic link leaving root cannot be read.
func Write(w io.Writer, root string, sel Selection, limit int64) (int64, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	c := &counter{w: w, limit: limit}
	zw := zip.NewWriter(c)
	for _, d := range sel.Dirs {
		info, err := r.Lstat(d)
		if err != nil || !info.IsDir() {
			continue
		}
		h, err := zip.FileInfoHeader(info)
		if err != nil {
			return c.n, err
		}
		h.Name = d + "/"
		if _, err := zw.CreateHeader(h); err != nil {
			return c.n, err
		}
	}
	for _, name := range sel.Files {
		if err := addFile(zw, r, name); err != nil {
			return c.n, err
		}
	}
	if err := zw.Close(); err != nil {
		return c.n, err
	}
	return c.n, nil
}

func addFile(zw *zip.Writer, r *os.Root, name string) error {
	info, err := r.Lstat(name)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil // replaced since Select; leave it out
	}
	f, err := r.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	h.Name = name
	h.Method = zip.Deflate
	dst, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, f)
	return err
}

// Extract writes the zip in ra (size bytes) under dir. Every entry must
// stay inside dir: an absolute name, a ".." component or a path through a
// symbolic link that leaves dir fails the whole extraction with
// ErrUnsafeEntry before anything of that entry is written (entries before it
// may have been). Symbolic-link entries are skipped and counted. With
// limit > 0, writing more than limit bytes fails with ErrTooLarge (a zip
// bomb stops there).
func Extract(ra io.ReaderAt, size int64, dir string, limit int64) (skippedLinks int, err error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return 0, fmt.Errorf("archive: %w", err)
	}
	for _, f := range zr.File {
		if _, err := safeName(f.Name); err != nil {
			return 0, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var written int64
	for _, f := range zr.File {
		name, _ := safeName(f.Name)
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			skippedLinks++
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			if err := r.MkdirAll(name, 0o755); err != nil {
				return skippedLinks, unsafe(f.Name, err)
			}
		default:
			if d := path.Dir(name); d != "." {
				if err := r.MkdirAll(d, 0o755); err != nil {
					return skippedLinks, unsafe(f.Name, err)
				}
			}
			n, err := extractFile(r, f, name, limit-written, limit > 0)
			written += n
			if err != nil {
				return skippedLinks, err
			}
		}
	}
	return skippedLinks, nil
}

// unsafe names an os.Root refusal (a path escaping through a symbolic
// link) as ErrUnsafeEntry; other errors pass through.
func unsafe(name string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%w: %q: %v", ErrUnsafeEntry, name, err)
	}
	return fmt.Errorf("archive: %q: %w", name, err)
}

func extractFile(r *os.Root, f *zip.File, name string, room int64, capped bool) (int64, error) {
	src, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("archive: %q: %w", f.Name, err)
	}
	defer src.Close()
	perm := f.Mode().Perm() | 0o600
	dst, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return 0, unsafe(f.Name, err)
	}
	var in io.Reader = src
	if capped {
		in = io.LimitReader(src, room+1)
	}
	n, err := io.Copy(dst, in)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("archive: %q: %w", f.Name, err)
	}
	if capped && n > room {
		return n, fmt.Errorf("%w: %q passes the limit", ErrTooLarge, f.Name)
	}
	return n, nil
}

// safeName is the slash path an entry is written at, or ErrUnsafeEntry.
func safeName(name string) (string, error) {
	n := strings.TrimSuffix(name, "/")
	if n == "" || strings.HasPrefix(n, "/") || (strings.Contains(n, "\\") && strings.Contains(n, "..")) ||
		!filepath.IsLocal(filepath.FromSlash(n)) || strings.ContainsRune(n, 0) {
		return "", fmt.Errorf("%w: %q", ErrUnsafeEntry, name)
	}
	return path.Clean(n), nil
}
