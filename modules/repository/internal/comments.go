package internal

import (
	"bytes"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/store"
)

// Comment is a comment on a commit, optionally on one line of a file.
type Comment struct {
	ID        int64     `json:"id"`
	ProjectID int64     `json:"project_id"`
	SHA       string    `json:"sha"`
	Note      string    `json:"note"`
	Path      *string   `json:"path"`
	Line      *int      `json:"line"`
	LineType  *string   `json:"line_type"`
	AuthorID  int64     `json:"author_id"`
	CreatedAt time.Time `json:"created_at"`
	// Its thread (commitdiscussions.go): the thread's id ("" for a comment
	// by itself made through this API or before threads: threadOf derives
	// one), its type ("DiscussionNote", "DiffNote" with Position) and when
	// it was last edited.
	DiscussionID string           `json:"discussion_id,omitempty"`
	Type         string           `json:"type,omitempty"`
	Position     *CommentPosition `json:"position,omitempty"`
	UpdatedAt    time.Time        `json:"updated_at,omitzero"`
}

func (c *Comment) RecordID() int64      { return c.ID }
func (c *Comment) SetRecordID(id int64) { c.ID = id }

var comments = store.NewTable[int64, Comment]("repository.commit_comments",
	store.Index[Comment]{Name: "commit", Keys: func(c *Comment) []string { return []string{statusCommitKey(c.ProjectID, c.SHA)} }},
	store.Index[Comment]{Name: "project", Keys: func(c *Comment) []string { return []string{store.IDString(c.ProjectID)} }},
)

// maxNoteBytes bounds a comment.
const maxNoteBytes = 1 << 20

// lineExists reports whether a file has the line on the given side of the
// commit ("new": the commit itself, "old": its first parent).
func lineExists(c *object.Commit, path string, line int, side string) bool {
	if line < 1 {
		return false
	}
	if side == "old" {
		if c.NumParents() == 0 {
			return false
		}
		p, err := c.Parent(0)
		if err != nil {
			return false
		}
		c = p
	}
	f, err := c.File(path)
	if err != nil {
		return false
	}
	content, err := f.Contents()
	if err != nil {
		return false
	}
	n := bytes.Count([]byte(content), []byte("\n"))
	if !strings.HasSuffix(content, "\n") && content != "" {
		n++
	}
	return line <= n
}
