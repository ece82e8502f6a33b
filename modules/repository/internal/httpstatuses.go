package internal

// The HTTP adapter of statuses.go: routes, request inputs, GitLab views and
// status codes; the service side stays in statuses.go.

import (
	"context"
	"errors"
	"net/http"
	"sort"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// StatusView is the spec's commit status.
type StatusView struct {
	ID           int64              `json:"id"`
	SHA          string             `json:"sha"`
	Ref          *string            `json:"ref"`
	Status       string             `json:"status"`
	Name         string             `json:"name"`
	TargetURL    *string            `json:"target_url"`
	Description  *string            `json:"description"`
	Coverage     *float64           `json:"coverage"`
	AllowFailure bool               `json:"allow_failure"`
	CreatedAt    api.Time           `json:"created_at"`
	StartedAt    *api.Time          `json:"started_at"`
	FinishedAt   *api.Time          `json:"finished_at"`
	Author       identity.BasicUser `json:"author"`
}

// author is the public view of the user who posted a status or comment; a
// deleted user's statuses and comments stay, shown as the ghost user.
func (st *Statuses) author(ctx context.Context, id int64) (identity.BasicUser, error) {
	base := api.ExternalURLFrom(ctx)
	u, err := st.users.UserByID(ctx, id)
	switch {
	case errors.Is(err, auth.ErrUserNotFound):
		return identity.GhostUser(base, id), nil
	case err != nil:
		return identity.BasicUser{}, err
	}
	return identity.NewBasicUser(base, u), nil
}

func (st *Statuses) view(ctx context.Context, s *Status) (StatusView, error) {
	v := StatusView{ID: s.ID, SHA: s.SHA, Ref: s.Ref, Status: s.State, Name: s.Name, TargetURL: s.TargetURL,
		Description: s.Description, Coverage: s.Coverage, AllowFailure: s.AllowFailure, CreatedAt: api.NewTime(s.CreatedAt)}
	if s.StartedAt != nil {
		v.StartedAt = api.TimePtr(*s.StartedAt)
	}
	if s.FinishedAt != nil {
		v.FinishedAt = api.TimePtr(*s.FinishedAt)
	}
	var err error
	v.Author, err = st.author(ctx, s.AuthorID)
	return v, err
}

func (st *Statuses) post(ctx context.Context, in *postStatusInput) (*struct{ Body *StatusView }, error) {
	b := in.Body
	saved, err := st.Post(ctx, in.ID, in.SHA, statusFields{State: b.State, Ref: b.Ref, Name: b.Name, Context: b.Context,
		TargetURL: b.TargetURL, Description: b.Description, Coverage: b.Coverage})
	if err != nil {
		return nil, err
	}
	v, err := st.view(ctx, saved)
	if err != nil {
		return nil, err
	}
	return &struct{ Body *StatusView }{Body: &v}, nil
}

type listStatusesInput struct {
	ProjectPath
	api.PageParams
	SHA   string `path:"sha"`
	Ref   string `query:"ref"`
	Stage string `query:"stage"`
	Name  string `query:"name"`
	All   bool   `query:"all" doc:"All statuses, not only the latest of each name and ref"`
}

type statusesOutput struct {
	api.PageHeaders
	Body []StatusView
}

func (st *Statuses) list(ctx context.Context, in *listStatusesInput) (*statusesOutput, error) {
	info, repo, err := st.reader.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	all, err := st.forCommit(ctx, info.ID, c.Hash.String())
	if err != nil {
		return nil, err
	}
	// One status is kept per (name, ref), updated in place: "all" and
	// "latest" are the same list here, newest first.
	var matching []*Status
	for _, s := range all {
		if in.Ref != "" && (s.Ref == nil || *s.Ref != in.Ref) {
			continue
		}
		if in.Name != "" && s.Name != in.Name {
			continue
		}
		if in.Stage != "" && s.stageName() != in.Stage {
			continue
		}
		matching = append(matching, s)
	}
	sort.SliceStable(matching, func(i, j int) bool { return matching[i].ID > matching[j].ID })
	out := &statusesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(matching)), Body: []StatusView{}}
	for _, s := range api.Window(matching, in.PageParams) {
		v, err := st.view(ctx, s)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

func (st *Statuses) register(a *api.API) {
	st.registerComments(a)
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "post-commit-status", Method: http.MethodPost, Path: "/projects/{id}/statuses/{sha}", Tags: tags,
		Summary: "Add or update a commit status (by sha, name and ref)", Access: api.SignedIn}, st.post)
	api.Register(a, api.Op{ID: "list-commit-statuses", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/statuses", Tags: tags,
		Summary: "A commit's statuses, newest first", Access: api.Public}, st.list)
}

type postStatusInput struct {
	ProjectPath
	SHA  string `path:"sha"`
	Body struct {
		State       string   `json:"state" required:"true" enum:"pending,running,success,failed,canceled"`
		Ref         *string  `json:"ref,omitempty"`
		Name        *string  `json:"name,omitempty"`
		Context     *string  `json:"context,omitempty"`
		TargetURL   *string  `json:"target_url,omitempty"`
		Description *string  `json:"description,omitempty"`
		Coverage    *float64 `json:"coverage,omitempty"`
	}
}
