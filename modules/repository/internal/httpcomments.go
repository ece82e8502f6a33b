package internal

// The HTTP adapter of comments.go: routes, request inputs, GitLab views and
// status codes; the service side stays in comments.go.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
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
	b := in.Body
	cm, err := st.Comment(ctx, in.ID, in.SHA, commentFields{Note: b.Note, Path: b.Path, Line: b.Line, LineType: b.LineType})
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
