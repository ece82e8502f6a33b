package internal

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	fconfig "github.com/fennec-forge/fennec/core/config"
)

// TestOpenObjectStoresAreBounded: past the bound, the least recently used
// object store is let go; a reader still holding it reads on, and the
// next request for it opens it again.
func TestOpenObjectStoresAreBounded(t *testing.T) {
	t.Parallel()
	cfg := fconfig.Default()
	cfg.Data = t.TempDir()
	st := NewStorage(cfg, nil, zap.NewNop())
	st.maxOpen = 3
	blob := func(id int64) plumbing.Hash {
		if _, err := st.Objects(id); err != nil { // makes the repository
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(f, []byte{byte(id)}, 0o600); err != nil {
			t.Fatal(err)
		}
		return plumbing.NewHash(git1(t, st.Path(id), "hash-object", "-w", f))
	}
	open := func() []int64 {
		st.objMu.Lock()
		defer st.objMu.Unlock()
		var ids []int64
		for e := st.used.Front(); e != nil; e = e.Next() {
			ids = append(ids, e.Value.(int64))
		}
		if len(ids) != len(st.objects) || len(ids) != len(st.usedAt) {
			t.Fatalf("%d in use order, %d stores, %d positions", len(ids), len(st.objects), len(st.usedAt))
		}
		return ids
	}
	h1 := blob(1)
	first, err := st.Objects(1)
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(2); id <= 4; id++ {
		blob(id)
	}
	if got := open(); !slices.Equal(got, []int64{4, 3, 2}) {
		t.Fatalf("open stores, most recent first: %v, want [4 3 2]", got)
	}
	if _, data, err := first.Read(h1); err != nil || !bytes.Equal(data, []byte{1}) {
		t.Fatalf("read through the store let go: %q, %v", data, err)
	}
	// Asking for a store makes it the most recent: 3, not 2, stays.
	if _, err := st.Objects(2); err != nil {
		t.Fatal(err)
	}
	again, err := st.Objects(1)
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Fatal("the store let go was handed out again")
	}
	if _, data, err := again.Read(h1); err != nil || !bytes.Equal(data, []byte{1}) {
		t.Fatalf("read through the reopened store: %q, %v", data, err)
	}
	if got := open(); !slices.Equal(got, []int64{1, 2, 4}) {
		t.Fatalf("open stores, most recent first: %v, want [1 2 4]", got)
	}
	st.forgetObjects(2)
	if got := open(); !slices.Equal(got, []int64{1, 4}) {
		t.Fatalf("after forgetting 2: %v, want [1 4]", got)
	}
}
