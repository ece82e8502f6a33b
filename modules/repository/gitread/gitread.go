package gitread

import (
	"context"
	"errors"
	"time"
)

// The errors of Reader, for errors.Is.
var (
	// ErrRevisionNotFound: the revision names no commit of the repository
	// (no such branch, tag or commit, or an empty repository).
	ErrRevisionNotFound = errors.New("gitread: revision not found")
	// ErrPathNotFound: the commit has nothing at that path (or a tree where
	// a file was asked, or a file where a tree was).
	ErrPathNotFound = errors.New("gitread: path not found")
	// ErrTooLarge: the file is larger than the caller's limit.
	ErrTooLarge = errors.New("gitread: file too large")
	// ErrNotAnnotatedTag: the object is not an annotated tag.
	ErrNotAnnotatedTag = errors.New("gitread: not an annotated tag")
)

// Signature is who wrote or committed a commit, and when.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// Commit is a commit as callers read it.
type Commit struct {
	ID        string
	ParentIDs []string
	Message   string
	Author    Signature
	Committer Signature
}

// Title is the first line of the message.
func (c Commit) Title() string {
	for i, r := range c.Message {
		if r == '\n' {
			return c.Message[:i]
		}
	}
	return c.Message
}

// EntryType is what a tree entry holds.
type EntryType string

// The entry types, as git's ls-tree and GitLab's tree API name them.
const (
	Blob   EntryType = "blob"
	Tree   EntryType = "tree"
	Module EntryType = "commit" // a submodule (gitlink)
)

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	ID   string
	Name string
	Path string // from the repository's root
	Type EntryType
	Mode string // octal, as git writes it ("100644")
}

// Tag is an annotated tag object.
type Tag struct {
	ID       string // the tag object's id
	Name     string
	Message  string
	CommitID string // the commit it leads to, nested tags peeled
}

// Ref is a tag (or a branch) and what it points at.
type Ref struct {
	Name     string // short: "v1.0"
	FullName string // "refs/tags/v1.0"
	Target   string // the object the ref points at: a commit, or an annotated tag
	CommitID string // the commit it leads to
}

// LogQuery says which history Log walks: the commits reachable from From
// and not from Stop, each once, breadth first from From (for a straight
// history that is newest first, as git log has it), at most Limit of them
// (0: no limit).
type LogQuery struct {
	From  []string
	Stop  []string
	Limit int
}

// Reader reads a project's repository.
type Reader interface {
	// Resolve is the commit id rev names, by git's rules: a full id, a ref
	// (full name, tag, branch), an unambiguous abbreviated id; "" is the
	// default branch.
	Resolve(ctx context.Context, projectID int64, rev string) (string, error)
	// Commit reads the commit rev names.
	Commit(ctx context.Context, projectID int64, rev string) (Commit, error)
	// File reads the file at path in the commit rev names, refusing files
	// above maxBytes (ErrTooLarge) so a caller's memory is bounded.
	File(ctx context.Context, projectID int64, rev, path string, maxBytes int64) ([]byte, error)
	// Tree lists the entries of the tree at path ("" is the root) in the
	// commit rev names, in git's order, from offset, at most limit (0: all).
	Tree(ctx context.Context, projectID int64, rev, path string, offset, limit int) ([]TreeEntry, error)
	// Log walks the history q names, calling fn for each commit until fn
	// returns false.
	Log(ctx context.Context, projectID int64, q LogQuery, fn func(Commit) bool) error
	// Tags lists the repository's tags, by name.
	Tags(ctx context.Context, projectID int64) ([]Ref, error)
	// Branches lists the repository's branches, by name, at most limit of
	// them (0: all).
	Branches(ctx context.Context, projectID int64, limit int) ([]Ref, error)
	// AnnotatedTag reads the annotated tag object id (ErrNotAnnotatedTag
	// for anything else).
	AnnotatedTag(ctx context.Context, projectID int64, id string) (Tag, error)
}
