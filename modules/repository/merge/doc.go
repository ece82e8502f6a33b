// Package merge is Fennec's three-way merge engine: a line-level merge of
// one file (Merge3) and a tree-level merge of three git trees (MergeTrees),
// written in pure Go over go-git's object storage, with no git binary at
// run time.
//
// The results are meant to be the ones C git (2.39) gives: Merge3 with its
// default options behaves like the content merge of `git merge` and
// `git merge-tree --write-tree` (merge-ort: histogram diff, "zealous"
// conflict refinement), and with Algorithm Myers and Level
// LevelZealousAlnum like `git merge-file`. MergeTrees follows merge-ort's
// rules for which paths conflict, what it writes into the result tree for
// them (conflict markers, the modified side of a modify/delete, files moved
// out of a directory's way) and the messages it prints. The testdata
// directory holds cases whose expected results were recorded from C git;
// see merge_test.go and the -update flag.
//
// The package owns no state and no storage of its own: it reads and writes
// objects through the storer.EncodedObjectStorer it is given. It must not
// import other Fennec modules; cherry-pick and merge requests import it.
package merge
