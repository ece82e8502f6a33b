package internal

// The HTTP adapter of comments.go: routes, request inputs, GitLab views and
// status codes; the service side stays in comments.go.

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/event"
)

// CommentView is the spec's commit comment.
type CommentView struct {
	Note      string             `json:"note"`
	Author    identity.BasicUser `json:"author"`
	CreatedAt api.Time           `json:"created_at"`
	Path      *string            `json:"path"`
	Line      *int               `json:"line"`
	LineType  *string            `json:"line_type"`
}

type listCommentsInput struct {
	ProjectPath
	api.PageParams
	SHA string `path:"sha"`
}

type commentsOutput struct {
	api.PageHeaders
	Body []CommentView
}

func (st *Statuses) commentView(ctx context.Context, c *Comment) (CommentView, error) {
	author, err := st.author(ctx, c.AuthorID)
	return CommentView{Note: c.Note, Author: author, CreatedAt: api.NewTime(c.CreatedAt), Path: c.Path, Line: c.Line, LineType: c.LineType}, err
}

func (st *Statuses) postComment(ctx context.Context, in *postCommentInput) (*struct{ Body *CommentView }, error) {
	info, err := st.reader.access.Require(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	note := strings.TrimSpace(in.Body.Note)
	if note == "" {
		return nil, api.Missing("note")
	}
	if len(note) > maxNoteBytes {
		return nil, api.FieldErrors{"note": {"is too long (maximum is 1048576 characters)"}}
	}
	sha, err := st.reader.store.commitHash(info.ID, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	cm := &Comment{ProjectID: info.ID, SHA: sha.String(), Note: note, AuthorID: auth.FromContext(ctx).UserID(), CreatedAt: time.Now().UTC()}
	// The spec's rules: a line comment needs the full sha, a path, a line
	// that exists on that side and a line_type; anything less is a comment
	// on the commit itself, with path, line and line_type null. Only a line
	// comment needs the tree, so only it opens the repository.
	b := in.Body
	fullSHA := strings.EqualFold(in.SHA, sha.String())
	if fullSHA && b.Path != nil && b.Line != nil && b.LineType != nil {
		repo, err := st.reader.store.Open(ctx, info.ID)
		if err != nil {
			return nil, err
		}
		c, err := repo.CommitObject(sha)
		if err != nil {
			return nil, err
		}
		if p, ok := cleanTreePath(*b.Path); ok && p != "" && lineExists(c, p, *b.Line, *b.LineType) {
			cm.Path, cm.Line, cm.LineType = &p, b.Line, b.LineType
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
	v, err := st.commentView(ctx, cm)
	if err != nil {
		return nil, err
	}
	return &struct{ Body *CommentView }{Body: &v}, nil
}

func (st *Statuses) listComments(ctx context.Context, in *listCommentsInput) (*commentsOutput, error) {
	info, repo, err := st.reader.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	var list []*Comment
	total := 0
	err = st.db.View(ctx, func(tx *store.Tx) error {
		ids, err := comments.IDsBy(tx, "commit", statusCommitKey(info.ID, c.Hash.String()))
		if err != nil {
			return err
		}
		total = len(ids)
		for _, id := range api.Window(ids, in.PageParams) {
			cm, err := comments.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, cm)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &commentsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []CommentView{}}
	for _, cm := range list {
		v, err := st.commentView(ctx, cm)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

func (st *Statuses) registerComments(a *api.API) {
	st.registerCommitDiscussions(a)
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "list-commit-comments", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/comments", Tags: tags,
		Summary: "Comments on a commit, oldest first", Access: api.Public}, st.listComments)
	api.Register(a, api.Op{ID: "post-commit-comment", Method: http.MethodPost, Path: "/projects/{id}/repository/commits/{sha}/comments", Tags: tags,
		Summary: "Comment on a commit or one line of it", Access: api.SignedIn}, st.postComment)
}

type postCommentInput struct {
	ProjectPath
	SHA  string `path:"sha"`
	Body struct {
		Note     string  `json:"note" required:"true"`
		Path     *string `json:"path,omitempty"`
		Line     *int    `json:"line,omitempty"`
		LineType *string `json:"line_type,omitempty" enum:"new,old"`
	}
}
