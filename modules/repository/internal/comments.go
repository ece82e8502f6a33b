package internal

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/event"
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

// commentFields is what a commit comment gives: its note and, for a
// comment on one line, the file, the line and its side ("new", "old").
type commentFields struct {
	Note     string
	Path     *string
	Line     *int
	LineType *string
}

// Comment comments on commit sha (or one line of it), as the caller in
// ctx, who must be able to read the code.
func (st *Statuses) Comment(ctx context.Context, project, sha string, f commentFields) (*Comment, error) {
	info, err := st.reader.access.Require(ctx, project, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	note := strings.TrimSpace(f.Note)
	if note == "" {
		return nil, missing("note")
	}
	if len(note) > maxNoteBytes {
		return nil, fieldsInvalid("note", "is too long (maximum is 1048576 characters)")
	}
	hash, err := st.reader.store.commitHash(info.ID, sha, info.DefaultBranch)
	if err != nil || sha == "" {
		return nil, ErrCommitNotFound
	}
	cm := &Comment{ProjectID: info.ID, SHA: hash.String(), Note: note, AuthorID: auth.FromContext(ctx).UserID(), CreatedAt: time.Now().UTC()}
	// The spec's rules: a line comment needs the full sha, a path, a line
	// that exists on that side and a line_type; anything less is a comment
	// on the commit itself, with path, line and line_type null. Only a line
	// comment needs the tree, so only it opens the repository.
	fullSHA := strings.EqualFold(sha, hash.String())
	if fullSHA && f.Path != nil && f.Line != nil && f.LineType != nil {
		repo, err := st.reader.store.Open(ctx, info.ID)
		if err != nil {
			return nil, err
		}
		c, err := repo.CommitObject(hash)
		if err != nil {
			return nil, err
		}
		if p, ok := cleanTreePath(*f.Path); ok && p != "" && lineExists(c, p, *f.Line, *f.LineType) {
			cm.Path, cm.Line, cm.LineType = &p, f.Line, f.LineType
		}
	}
	err = st.db.Update(ctx, func(tx *store.Tx) error {
		if err := comments.Insert(tx, cm); err != nil {
			return err
		}
		// Hooks (Note Hook) and mail (new_note) hear of it from the outbox.
		return st.bus.Publish(tx, event.CommitCommented{CommentID: cm.ID, ProjectID: info.ID, SHA: cm.SHA,
			AuthorID: cm.AuthorID, Note: cm.Note, Path: cm.Path, Line: cm.Line, LineType: cm.LineType, CreatedAt: cm.CreatedAt})
	})
	if err != nil {
		return nil, err
	}
	return cm, nil
}
