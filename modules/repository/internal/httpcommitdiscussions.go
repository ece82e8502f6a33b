package internal

// The HTTP adapter of commitdiscussions.go: routes, request inputs, GitLab views and
// status codes; the service side stays in commitdiscussions.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// CommitNoteView is a note of a commit's thread: GitLab's Note resource
// for a commit (noteable_type "Commit", commit_id, no noteable_id).
type CommitNoteView struct {
	ID           int64               `json:"id"`
	Type         *string             `json:"type"`
	Body         string              `json:"body"`
	Attachment   *string             `json:"attachment"`
	Author       identity.BasicUser  `json:"author"`
	CreatedAt    api.Time            `json:"created_at"`
	UpdatedAt    api.Time            `json:"updated_at"`
	System       bool                `json:"system"`
	NoteableID   *int64              `json:"noteable_id"`
	NoteableType string              `json:"noteable_type"`
	NoteableIID  *int64              `json:"noteable_iid"`
	ProjectID    int64               `json:"project_id"`
	CommitID     string              `json:"commit_id"`
	Position     *CommentPosition    `json:"position,omitempty"`
	Resolvable   bool                `json:"resolvable"`
	Resolved     bool                `json:"resolved"`
	ResolvedBy   *identity.BasicUser `json:"resolved_by"`
	ResolvedAt   *api.Time           `json:"resolved_at"`
}

func (st *Statuses) commitNoteViews(ctx context.Context, list []*Comment) ([]CommitNoteView, error) {
	authors := map[int64]identity.BasicUser{}
	out := make([]CommitNoteView, 0, len(list))
	for _, c := range list {
		a, ok := authors[c.AuthorID]
		if !ok {
			var err error
			if a, err = st.author(ctx, c.AuthorID); err != nil {
				return nil, err
			}
			authors[c.AuthorID] = a
		}
		updated := c.UpdatedAt
		if updated.IsZero() {
			updated = c.CreatedAt
		}
		v := CommitNoteView{ID: c.ID, Body: c.Note, Author: a, CreatedAt: api.NewTime(c.CreatedAt), UpdatedAt: api.NewTime(updated),
			NoteableType: "Commit", ProjectID: c.ProjectID, CommitID: c.SHA}
		if c.Type != "" {
			typ := c.Type
			v.Type = &typ
		}
		if c.Type == commitDiffNote {
			v.Position = c.Position
		}
		out = append(out, v)
	}
	return out, nil
}

type commitDiscussionsInput struct {
	ProjectPath
	api.PageParams
	SHA string `path:"sha"`
}

type commitDiscussionsOutput struct {
	api.PageHeaders
	Body []CommitDiscussionView
}

func (st *Statuses) listCommitDiscussions(ctx context.Context, in *commitDiscussionsInput) (*commitDiscussionsOutput, error) {
	info, c, err := st.commitOfRequest(ctx, in.ID, in.SHA)
	if err != nil {
		return nil, err
	}
	var all [][]*Comment
	if err := st.db.View(ctx, func(tx *store.Tx) error {
		all, err = commitThreads(tx, info.ID, c.Hash.String())
		return err
	}); err != nil {
		return nil, err
	}
	views, err := st.commitThreadViews(ctx, api.Window(all, in.PageParams))
	if err != nil {
		return nil, err
	}
	return &commitDiscussionsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(all)), Body: views}, nil
}

func (st *Statuses) updateCommitDiscussionNote(ctx context.Context, in *updateCommitNoteInput) (*commitNoteOutput, error) {
	p := in.CommitDiscussionNotePath
	cm, err := st.UpdateCommitNote(ctx, p.ID, p.SHA, p.DiscussionID, p.NoteID, in.Body.Body)
	if err != nil {
		return nil, err
	}
	views, err := st.commitNoteViews(ctx, []*Comment{cm})
	if err != nil {
		return nil, err
	}
	return &commitNoteOutput{Body: &views[0]}, nil
}

func (st *Statuses) registerCommitDiscussions(a *api.API) {
	tags := []string{"discussions", "repository"}
	base := "/projects/{id}/repository/commits/{sha}/discussions"
	one := base + "/{discussion_id}"
	api.Register(a, api.Op{ID: "list-commit-discussions", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "The threads of a commit, oldest first", Access: api.Public}, st.listCommitDiscussions)
	api.Register(a, api.Op{ID: "get-commit-discussion", Method: http.MethodGet, Path: one, Tags: tags,
		Summary: "One thread of a commit", Access: api.Public}, st.getCommitDiscussion)
	api.Register(a, api.Op{ID: "create-commit-discussion", Method: http.MethodPost, Path: base, Tags: tags,
		Summary: "Starts a thread on a commit, or a line comment with position", Access: api.SignedIn}, st.createCommitDiscussion)
	api.Register(a, api.Op{ID: "reply-to-commit-discussion", Method: http.MethodPost, Path: one + "/notes", Tags: tags,
		Summary: "Replies to a thread of a commit", Access: api.SignedIn}, st.replyToCommitDiscussion)
	api.Register(a, api.Op{ID: "get-commit-discussion-note", Method: http.MethodGet, Path: one + "/notes/{note_id}", Tags: tags,
		Summary: "A note of a thread of a commit", Access: api.Public}, st.getCommitDiscussionNote)
	api.Register(a, api.Op{ID: "update-commit-discussion-note", Method: http.MethodPut, Path: one + "/notes/{note_id}", Tags: tags,
		Summary: "Changes a note of a commit's thread (its author, a Master or an administrator)", Access: api.SignedIn}, st.updateCommitDiscussionNote)
	api.Register(a, api.Op{ID: "delete-commit-discussion-note", Method: http.MethodDelete, Path: one + "/notes/{note_id}", Tags: tags,
		Summary: "Deletes a note of a commit's thread (its author, a Master or an administrator)", Access: api.SignedIn}, st.deleteCommitDiscussionNote)
}

// CommitDiscussionPath names a thread of a commit (exported: Huma reads
// the parameters of exported embedded structs only).
type CommitDiscussionPath struct {
	ProjectPath
	SHA          string `path:"sha"`
	DiscussionID string `path:"discussion_id" doc:"The thread's id (40 hex digits)"`
}

// CommitDiscussionNotePath names a note of a commit's thread.
type CommitDiscussionNotePath struct {
	CommitDiscussionPath
	NoteID string `path:"note_id" doc:"The note's id"`
}

type commitPositionInput struct {
	BaseSHA      string `json:"base_sha" required:"true"`
	StartSHA     string `json:"start_sha" required:"true"`
	HeadSHA      string `json:"head_sha" required:"true"`
	PositionType string `json:"position_type" required:"true" enum:"text"`
	NewPath      string `json:"new_path,omitempty"`
	OldPath      string `json:"old_path,omitempty"`
	NewLine      *int   `json:"new_line,omitempty"`
	OldLine      *int   `json:"old_line,omitempty"`
}

type createCommitDiscussionInput struct {
	ProjectPath
	SHA  string `path:"sha"`
	Body struct {
		Body     *string              `json:"body,omitempty" required:"true" nullable:"true" doc:"The note's text"`
		Position *commitPositionInput `json:"position,omitempty" doc:"A line comment's place in the commit's diff"`
	}
}

type commitReplyInput struct {
	CommitDiscussionPath
	Body struct {
		Body *string `json:"body,omitempty" required:"true" nullable:"true" doc:"The note's text"`
	}
}

type updateCommitNoteInput struct {
	CommitDiscussionNotePath
	Body struct {
		Body *string `json:"body,omitempty" required:"true" nullable:"true" doc:"The note's text"`
	}
}

type commitDiscussionOutput struct {
	Body *CommitDiscussionView
}

type commitNoteOutput struct {
	Body *CommitNoteView
}

func (st *Statuses) createCommitDiscussion(ctx context.Context, in *createCommitDiscussionInput) (*commitDiscussionOutput, error) {
	var pos *CommentPosition
	if p := in.Body.Position; p != nil {
		pos = &CommentPosition{BaseSHA: p.BaseSHA, StartSHA: p.StartSHA, HeadSHA: p.HeadSHA, PositionType: p.PositionType,
			OldPath: p.OldPath, NewPath: p.NewPath, OldLine: p.OldLine, NewLine: p.NewLine}
	}
	cm, err := st.StartCommitDiscussion(ctx, in.ID, in.SHA, in.Body.Body, pos)
	if err != nil {
		return nil, err
	}
	views, err := st.commitThreadViews(ctx, [][]*Comment{{cm}})
	if err != nil {
		return nil, err
	}
	return &commitDiscussionOutput{Body: &views[0]}, nil
}

func (st *Statuses) replyToCommitDiscussion(ctx context.Context, in *commitReplyInput) (*commitNoteOutput, error) {
	p := in.CommitDiscussionPath
	cm, err := st.ReplyToCommitDiscussion(ctx, p.ID, p.SHA, p.DiscussionID, in.Body.Body)
	if err != nil {
		return nil, err
	}
	views, err := st.commitNoteViews(ctx, []*Comment{cm})
	if err != nil {
		return nil, err
	}
	return &commitNoteOutput{Body: &views[0]}, nil
}

// CommitDiscussionView is GitLab's Discussion resource for a commit.
type CommitDiscussionView struct {
	ID             string           `json:"id"`
	IndividualNote bool             `json:"individual_note"`
	Notes          []CommitNoteView `json:"notes"`
}

func (st *Statuses) commitThreadViews(ctx context.Context, list [][]*Comment) ([]CommitDiscussionView, error) {
	out := make([]CommitDiscussionView, 0, len(list))
	for _, t := range list {
		notes, err := st.commitNoteViews(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, CommitDiscussionView{ID: threadOf(t[0]), IndividualNote: t[0].Type == "", Notes: notes})
	}
	return out, nil
}

func (st *Statuses) getCommitDiscussion(ctx context.Context, in *CommitDiscussionPath) (*commitDiscussionOutput, error) {
	_, _, list, err := st.thread(ctx, in.ID, in.SHA, in.DiscussionID)
	if err != nil {
		return nil, err
	}
	views, err := st.commitThreadViews(ctx, [][]*Comment{list})
	if err != nil {
		return nil, err
	}
	return &commitDiscussionOutput{Body: &views[0]}, nil
}

func (st *Statuses) getCommitDiscussionNote(ctx context.Context, in *CommitDiscussionNotePath) (*commitNoteOutput, error) {
	_, _, list, err := st.thread(ctx, in.ID, in.SHA, in.DiscussionID)
	if err != nil {
		return nil, err
	}
	cm, err := commentInThread(list, in.NoteID)
	if err != nil {
		return nil, err
	}
	views, err := st.commitNoteViews(ctx, []*Comment{cm})
	if err != nil {
		return nil, err
	}
	return &commitNoteOutput{Body: &views[0]}, nil
}

func (st *Statuses) deleteCommitDiscussionNote(ctx context.Context, in *CommitDiscussionNotePath) (*struct{}, error) {
	return nil, st.DeleteCommitNote(ctx, in.ID, in.SHA, in.DiscussionID, in.NoteID)
}
