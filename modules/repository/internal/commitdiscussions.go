package internal

// Discussions (threads) on a commit: /projects/:id/repository/commits/:sha/
// discussions, over the commit's comments (comments.go), so a thread's
// notes are commit comments too and the commit comments API lists them. A
// comment made through that API, or before threads, is a thread by itself
// whose id is derived from the comment's; a thread started here has a
// random one; a reply joins its thread (a comment by itself becomes a
// thread). Replies are comments: they publish CommitCommented, as every
// comment, for hooks and mail. A thread may start as a line comment with
// GitLab's position, kept as the comment's path, line and line_type.
// Commit threads are not resolvable, as on GitLab.

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/event"
)

// CommentPosition is a commit line comment's place, as GitLab's
// discussions API takes it (head_sha is the commit).
type CommentPosition struct {
	BaseSHA      string `json:"base_sha"`
	StartSHA     string `json:"start_sha"`
	HeadSHA      string `json:"head_sha"`
	PositionType string `json:"position_type"`
	OldPath      string `json:"old_path"`
	NewPath      string `json:"new_path"`
	OldLine      *int   `json:"old_line"`
	NewLine      *int   `json:"new_line"`
}

// The types of a comment in a thread.
const (
	commitDiscussionNote = "DiscussionNote"
	commitDiffNote       = "DiffNote"
)

// threadOf is a comment's thread id: its own, or for a comment by itself
// made before threads (or through the commit comments API) one derived
// from its id, the same on every read.
func threadOf(c *Comment) string {
	if c.DiscussionID != "" {
		return c.DiscussionID
	}
	sum := sha1.Sum([]byte("fennec commit comment " + store.IDString(c.ID)))
	return hex.EncodeToString(sum[:])
}

func newThreadID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// commitThreads are a commit's comments grouped in threads, each oldest
// first, ordered by their first comment.
func commitThreads(tx *store.Tx, project int64, sha string) ([][]*Comment, error) {
	ids, err := comments.IDsBy(tx, "commit", statusCommitKey(project, sha))
	if err != nil {
		return nil, err
	}
	var out [][]*Comment
	at := map[string]int{}
	for _, id := range ids {
		c, err := comments.Get(tx, id)
		if err != nil {
			return nil, err
		}
		t := threadOf(c)
		if i, ok := at[t]; ok {
			out[i] = append(out[i], c)
			continue
		}
		at[t] = len(out)
		out = append(out, []*Comment{c})
	}
	return out, nil
}

// commitThread is one thread of a commit.
func commitThread(tx *store.Tx, project int64, sha, id string) ([]*Comment, error) {
	all, err := commitThreads(tx, project, sha)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if threadOf(t[0]) == id {
			return t, nil
		}
	}
	return nil, errCommitDiscussionNotFound
}

// commitOfRequest is the commit a request names (a full sha, or a ref),
// for a caller who may read the code.
func (st *Statuses) commitOfRequest(ctx context.Context, id, sha string) (projects.ProjectInfo, *object.Commit, error) {
	info, repo, err := st.reader.open(ctx, id, projects.ReadCode)
	if err != nil {
		return info, nil, err
	}
	c, err := resolveCommit(repo, sha, info.DefaultBranch)
	if err != nil || sha == "" {
		return info, nil, ErrCommitNotFound
	}
	return info, c, nil
}

// addComment stores a comment of a thread and publishes CommitCommented
// with it, as postComment does; join runs in the transaction first.
func (st *Statuses) addComment(ctx context.Context, info projects.ProjectInfo, cm *Comment, join func(tx *store.Tx) error) error {
	return st.db.Update(ctx, func(tx *store.Tx) error {
		if join != nil {
			if err := join(tx); err != nil {
				return err
			}
		}
		if err := comments.Insert(tx, cm); err != nil {
			return err
		}
		return st.bus.Publish(tx, event.CommitCommented{CommentID: cm.ID, ProjectID: info.ID, SHA: cm.SHA,
			AuthorID: cm.AuthorID, Note: cm.Note, Path: cm.Path, Line: cm.Line, LineType: cm.LineType, CreatedAt: cm.CreatedAt})
	})
}

// mayChangeComment: the comment's author, a Master or an administrator
// (GitLab's admin_note), in a project that is not archived.
func mayChangeComment(ctx context.Context, info projects.ProjectInfo, cm *Comment) error {
	if info.Archived {
		return projects.ErrForbidden
	}
	if cm.AuthorID == auth.FromContext(ctx).UserID() || info.Level >= projects.Master {
		return nil
	}
	return projects.ErrForbidden
}
