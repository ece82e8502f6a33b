package plugin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fennec-forge/fennec/core/config"
)

// ErrChecksumMismatch: a plugin binary is not the one its sha256 names, or
// it changed on disk since the host pinned it.
var ErrChecksumMismatch = errors.New("plugin: binary does not match its sha256")

// resolvePath finds a plugin's binary. An empty Path means the shipped binary
// named like the plugin in dir; a bare file name (no separator, such as
// "auth-ldap") is looked up in dir too; anything else is a path, relative to
// the working directory.
func resolvePath(p config.Plugin, dir string) string {
	path := p.Path
	if path == "" {
		path = p.Name
	}
	if !strings.ContainsRune(path, '/') && !strings.ContainsRune(path, filepath.Separator) {
		path = filepath.Join(dir, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path
}

// pin returns the sha256 every launch of the binary at path is checked
// against: the configured one, which must match now, or else the binary's
// sum now, so that a binary replaced after start-up is refused rather than
// run.
func pin(path, configured string) ([]byte, error) {
	actual, err := fileSHA256(path)
	if err != nil {
		return nil, err
	}
	if configured == "" {
		return actual, nil
	}
	want, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(configured)), "sha256:"))
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("plugin: sha256 %q is not 64 hexadecimal digits", configured)
	}
	if !bytes.Equal(want, actual) {
		return nil, fmt.Errorf("%w: %s has sha256 %x, the configuration says %x", ErrChecksumMismatch, path, actual, want)
	}
	return want, nil
}

func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("plugin: binary: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("plugin: binary: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("plugin: binary %s is not an executable file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("plugin: binary: %w", err)
	}
	return h.Sum(nil), nil
}
