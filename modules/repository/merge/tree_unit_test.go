package merge

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

func TestMergeTreesNilTrees(t *testing.T) {
	s := memory.NewStorage()
	ours := buildTree(t, s, map[string]testFile{"a": {mode: "100644", content: []byte("a\n")}})
	res, err := MergeTrees(s, nil, ours, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Clean || res.Tree != ours.Hash {
		t.Errorf("merge with nil base and theirs = %+v, want ours' tree %s", res, ours.Hash)
	}
	res, err = MergeTrees(s, nil, nil, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if empty := plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904"); !res.Clean || res.Tree != empty {
		t.Errorf("merge of nothing = %+v, want the empty tree", res)
	}
}

func TestMergeTreesLabelsInPaths(t *testing.T) {
	s := memory.NewStorage()
	ours := buildTree(t, s, map[string]testFile{"x": {mode: "100644", content: []byte("file\n")}})
	theirs := buildTree(t, s, map[string]testFile{"x/y": {mode: "100644", content: []byte("dir\n")}})
	res, err := MergeTrees(s, nil, ours, theirs, Options{OursLabel: "feature/one"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "x~feature_one" || res.Conflicts[0].Kind != ConflictFileDirectory {
		t.Fatalf("conflicts = %+v, want x~feature_one file/directory", res.Conflicts)
	}
	if err := res.Err(); !errors.Is(err, ErrConflict) {
		t.Errorf("Err() = %v, want ErrConflict", err)
	}
}

func TestMergeTreesMissingObject(t *testing.T) {
	s := memory.NewStorage()
	base := buildTree(t, s, map[string]testFile{"f": {mode: "100644", content: []byte("a\nb\n")}})
	ours := buildTree(t, s, map[string]testFile{"f": {mode: "100644", content: []byte("A\nb\n")}})
	// theirs refers to a blob the storer does not have.
	missing := plumbing.NewHash("0123456789012345678901234567890123456789")
	theirs := &object.Tree{Entries: []object.TreeEntry{{Name: "f", Mode: filemode.Regular, Hash: missing}}}
	_, err := MergeTrees(s, base, ours, theirs, Options{})
	if !errors.Is(err, ErrMissingObject) {
		t.Errorf("err = %v, want ErrMissingObject", err)
	}
	bad := &object.Tree{Entries: []object.TreeEntry{{Name: "f", Mode: filemode.FileMode(0o100600), Hash: missing}}}
	if _, err := MergeTrees(s, base, ours, bad, Options{}); !errors.Is(err, ErrUnsupportedEntry) {
		t.Errorf("err = %v, want ErrUnsupportedEntry", err)
	}
}

func TestMergeTreesNoRenames(t *testing.T) {
	s := memory.NewStorage()
	content := []byte("1\n2\n3\n4\n5\n")
	base := buildTree(t, s, map[string]testFile{"old": {mode: "100644", content: content}})
	ours := buildTree(t, s, map[string]testFile{"new": {mode: "100644", content: content}})
	theirs := buildTree(t, s, map[string]testFile{"old": {mode: "100644", content: []byte("1\n2\n3\n4\n5 theirs\n")}})
	res, err := MergeTrees(s, base, ours, theirs, Options{NoRenames: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Kind != ConflictModifyDelete || res.Conflicts[0].Path != "old" {
		t.Errorf("without renames, conflicts = %+v, want modify/delete of old", res.Conflicts)
	}
	res, err = MergeTrees(s, base, ours, theirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Clean {
		t.Errorf("with renames, conflicts = %+v, want a clean merge into new", res.Conflicts)
	}
}
