package gitpack

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// closedInfo is what a pack-<sha>.fennec sidecar records.
type closedInfo struct {
	tips []Hash
}

const sidecarMagic = "fennec closed pack v1"

// readSidecar reads a .fennec sidecar; nil without error when there is
// none.
func readSidecar(path string) (*closedInfo, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != sidecarMagic {
		return nil, fmt.Errorf("gitpack: %s: not a closed pack sidecar", path)
	}
	ci := &closedInfo{}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		h, ok := ParseHex(line)
		if !ok {
			return nil, fmt.Errorf("gitpack: %s: bad tip %q", path, line)
		}
		ci.tips = append(ci.tips, h)
	}
	return ci, nil
}

// ParseHex reads a 40-digit lower-case hex object id.
func ParseHex[T string | []byte](s T) (Hash, bool) {
	var h Hash
	if len(s) != 40 {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// ClosedPacks lists the store's closed packs (none before a Repack).
func (s *Store) ClosedPacks() []ClosedPack {
	sn := s.snap.Load()
	var out []ClosedPack
	for _, p := range sn.packs {
		if p.closed == nil {
			continue
		}
		x := p.idx
		out = append(out, ClosedPack{
			Name:    p.name,
			Tips:    append([]Hash(nil), p.closed.tips...),
			Objects: x.n,
			Contains: func(h Hash) bool {
				_, ok := x.find(h)
				return ok
			},
			List: func() []Hash {
				out := make([]Hash, x.n)
				for i := range out {
					out[i] = x.name(i)
				}
				return out
			},
			p: p,
		})
	}
	return out
}

// Repack writes objects (the closure of tips, computed by the caller) as
// one closed pack reusing stored entries, installs it, then removes the
// packs and loose objects it replaces. Readers are never blocked.
//
// The packs removed are those present when Repack began (packs a push
// installs meanwhile stay); a loose object is removed only when the new
// pack holds it. With no objects at all Repack changes nothing.
func (s *Store) Repack(objects []Hash, tips []Hash) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if len(objects) == 0 {
		return nil
	}
	s.repackMu.Lock()
	defer s.repackMu.Unlock()
	if _, err := s.reload(); err != nil {
		return err
	}
	old := s.snap.Load().packs

	tmp, err := os.MkdirTemp(s.objDir, "incoming-repack-")
	if err != nil {
		return fmt.Errorf("gitpack: repack: %w", err)
	}
	defer os.RemoveAll(tmp)
	name, err := s.writeClosedPack(tmp, objects, tips)
	if err != nil {
		return fmt.Errorf("gitpack: repack: %w", err)
	}
	if err := os.MkdirAll(s.packDir, 0o755); err != nil {
		return err
	}
	// .pack, then the sidecar, then the .idx that makes it visible.
	for _, ext := range []string{".pack", ".fennec", ".idx"} {
		if err := os.Rename(filepath.Join(tmp, name+ext), filepath.Join(s.packDir, name+ext)); err != nil {
			return fmt.Errorf("gitpack: repack: %w", err)
		}
	}
	syncDir(s.packDir)
	s.mu.Lock()
	_, err = s.reloadLocked(name) // an identical pack may be open: new sidecar
	s.mu.Unlock()
	if err != nil {
		return err
	}
	var np *pack
	for _, p := range s.snap.Load().packs {
		if p.name == name {
			np = p
		}
	}
	if np == nil {
		return fmt.Errorf("gitpack: repack: %s did not load", name)
	}

	// Remove what the new pack replaces: the index first, so no reader
	// finds a pack without its data.
	var errs []error
	for _, p := range old {
		if p.name == name {
			continue
		}
		base := filepath.Join(s.packDir, p.name)
		for _, ext := range []string{".idx", ".pack", ".fennec", ".bitmap", ".rev", ".mtimes", ".promisor", ".keep"} {
			if err := os.Remove(base + ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if _, err := s.reload(); err != nil {
		errs = append(errs, err)
	}
	if err := s.pruneLoose(np.idx); err != nil {
		errs = append(errs, err)
	}
	s.sweepQuarantines(time.Now().Add(-24 * time.Hour))
	return errors.Join(errs...)
}

// sweepQuarantines removes quarantine directories last touched before
// cutoff: left by a process that died in the middle of a push.
func (s *Store) sweepQuarantines(cutoff time.Time) {
	ents, err := os.ReadDir(s.objDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "incoming-") {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			os.RemoveAll(filepath.Join(s.objDir, e.Name()))
		}
	}
}

// writeClosedPack writes pack, index and sidecar into dir and returns the
// pack's name.
func (s *Store) writeClosedPack(dir string, objects, tips []Hash) (string, error) {
	tmpPack := filepath.Join(dir, "tmp_pack")
	f, err := os.OpenFile(tmpPack, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var rec []idxEntry
	trailer, err := s.writePack(f, objects, WriteOptions{OfsDelta: true}, &rec)
	if err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	name := "pack-" + trailer.String()
	base := filepath.Join(dir, name)
	if err := writeFileSync(base+".idx", func(w io.Writer) error {
		_, err := writeIndex(w, rec, trailer)
		return err
	}); err != nil {
		return "", err
	}
	if err := writeFileSync(base+".fennec", func(w io.Writer) error {
		var b strings.Builder
		b.WriteString(sidecarMagic + "\n")
		for _, t := range tips {
			b.WriteString(t.String() + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}); err != nil {
		return "", err
	}
	return name, os.Rename(tmpPack, base+".pack")
}

func writeFileSync(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pruneLoose removes the loose objects x holds, and fan-out directories
// left empty.
func (s *Store) pruneLoose(x *index) error {
	dirs, err := os.ReadDir(s.objDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		if _, ok := unhexPair(d.Name()); !ok {
			continue
		}
		sub := filepath.Join(s.objDir, d.Name())
		files, err := os.ReadDir(sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			h, ok := ParseHex(d.Name() + f.Name())
			if !ok {
				continue
			}
			if _, in := x.find(h); in {
				if err := os.Remove(filepath.Join(sub, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
		os.Remove(sub) // only if empty
	}
	return errors.Join(errs...)
}

func unhexPair(s string) (byte, bool) {
	hi, ok1 := unhex(s[0])
	lo, ok2 := unhex(s[1])
	return hi<<4 | lo, ok1 && ok2
}
