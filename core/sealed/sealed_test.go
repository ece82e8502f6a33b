package sealed_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/core/sealed"
)

func TestSealRoundTrip(t *testing.T) {
	dir := t.TempDir()
	box, err := sealed.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := box.Seal("hook-secret", "hook")
	if !sealed.IsSealed(v) || strings.Contains(v, "hook-secret") {
		t.Fatalf("sealed value %q", v)
	}
	if v2 := box.Seal("hook-secret", "hook"); v2 == v {
		t.Fatal("two seals of one value are equal: the nonce is not fresh")
	}
	if got, err := box.Unseal(v, "hook"); err != nil || got != "hook-secret" {
		t.Fatalf("unseal: %q %v", got, err)
	}
	if _, err := box.Unseal(v, "import_url"); err != sealed.ErrCorrupt {
		t.Fatalf("a value opened for another purpose: %v", err)
	}
	if got, err := box.Unseal("plain-from-before", "hook"); err != nil || got != "plain-from-before" {
		t.Fatalf("a plain legacy value: %q %v", got, err)
	}
	if box.Seal("", "hook") != "" {
		t.Fatal("an empty value was sealed")
	}
	if _, err := box.Unseal(v[:len(v)-2], "hook"); err != sealed.ErrCorrupt {
		t.Fatalf("a cut value: %v", err)
	}

	// The key file: 0600, 64 hex digits, and the same key on the next start.
	fi, err := os.Stat(filepath.Join(dir, sealed.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi.Mode(), err)
	}
	again, err := sealed.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Unseal(v, "hook"); err != nil || got != "hook-secret" {
		t.Fatalf("after reopening: %q %v", got, err)
	}
	// Another key does not open it.
	other, _ := sealed.New(bytes.Repeat([]byte{7}, 32))
	if _, err := other.Unseal(v, "hook"); err != sealed.ErrCorrupt {
		t.Fatalf("another key: %v", err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data dir holds %v", entries)
	}
}

// Concurrent first starts agree on one key.
func TestOpenConcurrently(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	boxes := make([]*sealed.Box, 8)
	for i := range boxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := sealed.Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			boxes[i] = b
		}()
	}
	wg.Wait()
	v := boxes[0].Seal("x", "p")
	for i, b := range boxes {
		if got, err := b.Unseal(v, "p"); err != nil || got != "x" {
			t.Fatalf("box %d has another key: %v", i, err)
		}
	}
}

func TestBadKeyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, sealed.KeyFile), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sealed.Open(dir); err == nil || !strings.Contains(err.Error(), "does not hold a key") {
		t.Fatalf("a bad key file: %v", err)
	}
}
