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
	"errors"
	"strconv"
	"strings"
	"time"

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

// commitNoteBody is the rules of a comment's text (comments.go's).
func commitNoteBody(body *string) (string, error) {
	if body == nil || strings.TrimSpace(*body) == "" {
		return "", missing("body")
	}
	if len(*body) > maxNoteBytes {
		return "", fieldsInvalid("note", "is too long (maximum is 1048576 characters)")
	}
	return *body, nil
}

// commentInThread is the note of a thread a request names.
func commentInThread(list []*Comment, raw string) (*Comment, error) {
	id, err := strconv.ParseUint(raw, 10, 63)
	if err == nil {
		for _, c := range list {
			if c.ID == int64(id) {
				return c, nil
			}
		}
	}
	return nil, errCommitNoteNotFound
}

// linePosition checks a line comment's position p against commit c:
// head_sha is c, and the line is in the file on its side (new: c, old: its
// first parent), as commit line comments are checked. It returns the
// position (each path filled from the other when blank), and the
// comment's path, line and line_type.
func linePosition(c *object.Commit, p CommentPosition) (CommentPosition, string, int, string, error) {
	pos := p
	if pos.OldPath == "" {
		pos.OldPath = pos.NewPath
	}
	if pos.NewPath == "" {
		pos.NewPath = pos.OldPath
	}
	if !strings.EqualFold(p.HeadSHA, c.Hash.String()) {
		return pos, "", 0, "", errCommitBadPosition
	}
	path, line, side := pos.NewPath, p.NewLine, "new"
	if p.NewLine == nil {
		path, line, side = pos.OldPath, p.OldLine, "old"
	}
	clean, ok := cleanTreePath(path)
	if line == nil || !ok || clean == "" || !lineExists(c, clean, *line, side) {
		return pos, "", 0, "", errCommitBadPosition
	}
	return pos, clean, *line, side, nil
}

// thread is the thread discussion of commit sha, for a caller who may
// read the code, with the commit and its project.
func (st *Statuses) thread(ctx context.Context, project, sha, discussion string) (projects.ProjectInfo, *object.Commit, []*Comment, error) {
	info, c, err := st.commitOfRequest(ctx, project, sha)
	if err != nil {
		return info, nil, nil, err
	}
	var list []*Comment
	err = st.db.View(ctx, func(tx *store.Tx) error {
		list, err = commitThread(tx, info.ID, c.Hash.String(), discussion)
		return err
	})
	return info, c, list, err
}

// StartCommitDiscussion starts a thread on commit sha, a line comment
// when pos is given, as the caller in ctx, who must be able to read the
// code; it returns the thread's first note.
func (st *Statuses) StartCommitDiscussion(ctx context.Context, project, sha string, text *string, pos *CommentPosition) (*Comment, error) {
	info, c, err := st.commitOfRequest(ctx, project, sha)
	if err != nil {
		return nil, err
	}
	body, err := commitNoteBody(text)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	cm := &Comment{ProjectID: info.ID, SHA: c.Hash.String(), Note: body, AuthorID: auth.FromContext(ctx).UserID(),
		CreatedAt: now, UpdatedAt: now, DiscussionID: newThreadID(), Type: commitDiscussionNote}
	if pos != nil {
		pos, path, line, side, err := linePosition(c, *pos)
		if err != nil {
			return nil, err
		}
		cm.Type, cm.Position, cm.Path, cm.Line, cm.LineType = commitDiffNote, &pos, &path, &line, &side
	}
	if err := st.addComment(ctx, info, cm, nil); err != nil {
		return nil, err
	}
	return cm, nil
}

// ReplyToCommitDiscussion adds a note to thread discussion of commit sha,
// as the caller in ctx, who must be able to read the code.
func (st *Statuses) ReplyToCommitDiscussion(ctx context.Context, project, sha, discussion string, text *string) (*Comment, error) {
	info, c, list, err := st.thread(ctx, project, sha, discussion)
	if err != nil {
		return nil, err
	}
	body, err := commitNoteBody(text)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	thread := threadOf(list[0])
	cm := &Comment{ProjectID: info.ID, SHA: c.Hash.String(), Note: body, AuthorID: auth.FromContext(ctx).UserID(),
		CreatedAt: now, UpdatedAt: now, DiscussionID: thread, Type: commitDiscussionNote}
	err = st.addComment(ctx, info, cm, func(tx *store.Tx) error {
		first, err := comments.Get(tx, list[0].ID)
		if errors.Is(err, store.ErrNotFound) {
			return errCommitDiscussionNotFound
		} else if err != nil {
			return err
		}
		switch first.Type {
		case "":
			// A reply to a comment by itself makes a thread of it; its
			// id stays the one it was shown with.
			first.Type, first.DiscussionID = commitDiscussionNote, thread
			return comments.Update(tx, first)
		case commitDiffNote:
			// A line comment's replies are on its line.
			cm.Type, cm.Position, cm.Path, cm.Line, cm.LineType = commitDiffNote, first.Position, first.Path, first.Line, first.LineType
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cm, nil
}

// UpdateCommitNote changes the text of note noteID of thread discussion
// of commit sha, as the caller in ctx: its author, a Master or an
// administrator.
func (st *Statuses) UpdateCommitNote(ctx context.Context, project, sha, discussion, noteID string, text *string) (*Comment, error) {
	info, _, list, err := st.thread(ctx, project, sha, discussion)
	if err != nil {
		return nil, err
	}
	cm, err := commentInThread(list, noteID)
	if err != nil {
		return nil, err
	}
	body, err := commitNoteBody(text)
	if err != nil {
		return nil, err
	}
	if err := mayChangeComment(ctx, info, cm); err != nil {
		return nil, err
	}
	err = st.db.Update(ctx, func(tx *store.Tx) error {
		fresh, err := comments.Get(tx, cm.ID)
		if errors.Is(err, store.ErrNotFound) {
			return errCommitNoteNotFound
		} else if err != nil {
			return err
		}
		fresh.Note, fresh.UpdatedAt = body, time.Now().UTC()
		cm = fresh
		return comments.Update(tx, fresh)
	})
	if err != nil {
		return nil, err
	}
	return cm, nil
}

// DeleteCommitNote deletes note noteID of thread discussion of commit
// sha, as the caller in ctx: its author, a Master or an administrator.
func (st *Statuses) DeleteCommitNote(ctx context.Context, project, sha, discussion, noteID string) error {
	info, _, list, err := st.thread(ctx, project, sha, discussion)
	if err != nil {
		return err
	}
	cm, err := commentInThread(list, noteID)
	if err != nil {
		return err
	}
	if err := mayChangeComment(ctx, info, cm); err != nil {
		return err
	}
	return st.db.Update(ctx, func(tx *store.Tx) error {
		err := comments.Delete(tx, cm.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
}
