package internal

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

type listPipelinesInput struct {
	ProjectPath
	api.PageParams
	Scope      string `query:"scope" enum:"running,pending,finished,branches,tags" doc:"running, pending, finished, branches or tags"`
	Status     string `query:"status" enum:"created,pending,running,success,failed,canceled,skipped,manual"`
	Ref        string `query:"ref"`
	YAMLErrors string `query:"yaml_errors" enum:"true,false" doc:"Only pipelines with (true) or without (false) YAML errors"`
	Username   string `query:"username"`
	OrderBy    string `query:"order_by" enum:"id,status,ref,user_id" doc:"id (default), status, ref or user_id"`
	Sort       string `query:"sort" enum:"asc,desc" doc:"desc (default) or asc"`
}

type pipelinesOutput struct {
	api.PageHeaders
	Body []PipelineRef
}

type pipelinePath struct {
	ProjectPath
	PipelineID uint64 `path:"pipeline_id"`
}

type pipelineOutput struct {
	Body *PipelineView
}

func (s *Service) listPipelines(ctx context.Context, in *listPipelinesInput) (*pipelinesOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	var userID int64 = -1
	if in.Username != "" {
		u, err := s.users.UserByUsername(ctx, in.Username)
		if err != nil {
			return &pipelinesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, 0), Body: []PipelineRef{}}, nil
		}
		userID = u.ID
	}
	var list []*Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := pipelines.IDsBy(tx, "project", u64(uint64(info.ID)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			p, err := pipelines.Get(tx, id)
			if err != nil {
				return err
			}
			if keepPipeline(p, in, userID) {
				list = append(list, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	less := func(a, b *Pipeline) bool {
		switch in.OrderBy {
		case "status":
			if a.Status != b.Status {
				return a.Status < b.Status
			}
		case "ref":
			if a.Ref != b.Ref {
				return a.Ref < b.Ref
			}
		case "user_id":
			if a.UserID != b.UserID {
				return a.UserID < b.UserID
			}
		}
		return a.ID < b.ID
	}
	sort.SliceStable(list, func(i, j int) bool {
		if in.Sort == "asc" {
			return less(list[i], list[j])
		}
		return less(list[j], list[i])
	})
	out := &pipelinesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: []PipelineRef{}}
	for _, p := range api.Window(list, in.PageParams) {
		out.Body = append(out.Body, PipelineRef{ID: p.ID, ProjectID: int64(p.ProjectID), SHA: p.SHA, Ref: p.Ref, Status: p.Status})
	}
	return out, nil
}

func keepPipeline(p *Pipeline, in *listPipelinesInput, userID int64) bool {
	switch in.Scope {
	case "running":
		if p.Status != StatusRunning {
			return false
		}
	case "pending":
		if p.Status != StatusPending {
			return false
		}
	case "finished":
		if !finished(p.Status) {
			return false
		}
	case "branches":
		if p.Tag {
			return false
		}
	case "tags":
		if !p.Tag {
			return false
		}
	}
	if in.Status != "" && p.Status != in.Status {
		return false
	}
	if in.Ref != "" && p.Ref != in.Ref {
		return false
	}
	if in.YAMLErrors != "" && (in.YAMLErrors == "true") != (p.YAMLErrors != nil) {
		return false
	}
	return userID < 0 || p.UserID == userID
}

func (s *Service) getPipeline(ctx context.Context, in *pipelinePath) (*pipelineOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	var p *Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		p, err = pipelineIn(tx, info.ID, in.PipelineID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := s.pipelineView(ctx, p)
	return &pipelineOutput{Body: &v}, nil
}

type createPipelineInput struct {
	ProjectPath
	Body struct {
		Ref string `json:"ref" doc:"The branch or tag to run the pipeline for"`
	}
}

// createPipeline is POST /projects/:id/pipeline?ref=: a pipeline for the
// ref's head, as a push would have made.
func (s *Service) createPipelineAPI(ctx context.Context, in *createPipelineInput) (*pipelineOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	ref := strings.TrimSpace(in.Body.Ref)
	if ref == "" {
		return nil, api.Missing("ref")
	}
	// A pipeline of a protected branch gets its protected variables:
	// running one needs the right to push or merge to it. A name that is
	// no branch is a tag (or nothing, which createForRef refuses).
	branch, err := s.isBranch(ctx, info.ID, ref)
	if err != nil {
		return nil, err
	}
	if err := s.mayControlRef(ctx, info.ID, ref, !branch); err != nil {
		return nil, err
	}
	p, err := s.createForRef(ctx, info, ref, SourceAPI, auth.FromContext(ctx).UserID())
	if err != nil {
		return nil, err
	}
	v := s.pipelineView(ctx, p)
	return &pipelineOutput{Body: &v}, nil
}

// isBranch says whether a branch of that name exists (createForRef takes
// the branch when a tag has the same name).
func (s *Service) isBranch(ctx context.Context, projectID int64, name string) (bool, error) {
	repo, err := s.repos.Open(ctx, projectID)
	if err != nil {
		return false, err
	}
	_, err = repo.Reference(plumbing.NewBranchReferenceName(name), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *Service) retryPipeline(ctx context.Context, in *pipelinePath) (*pipelineOutput, error) {
	return s.pipelineControl(ctx, in, func(tx *store.Tx, p *Pipeline, userID int64) error {
		return s.retryFailed(tx, p, userID)
	})
}

func (s *Service) cancelPipeline(ctx context.Context, in *pipelinePath) (*pipelineOutput, error) {
	return s.pipelineControl(ctx, in, func(tx *store.Tx, p *Pipeline, _ int64) error {
		return s.cancelAll(tx, p)
	})
}

func (s *Service) pipelineControl(ctx context.Context, in *pipelinePath, op func(*store.Tx, *Pipeline, int64) error) (*pipelineOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	// Before the write transaction, as for jobs (control); a pipeline's
	// ref never changes.
	var p *Pipeline
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		p, err = pipelineIn(tx, info.ID, in.PipelineID)
		return err
	}); err != nil {
		return nil, err
	}
	if err := s.mayControlRef(ctx, info.ID, p.Ref, p.Tag); err != nil {
		return nil, err
	}
	userID := auth.FromContext(ctx).UserID()
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if p, err = pipelineIn(tx, info.ID, in.PipelineID); err != nil {
			return err
		}
		if err := op(tx, p, userID); err != nil {
			return err
		}
		p, err = pipelines.Get(tx, p.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.nudge()
	v := s.pipelineView(ctx, p)
	return &pipelineOutput{Body: &v}, nil
}

func (s *Service) registerPipelines(a *api.API) {
	tags := []string{"pipelines"}
	api.Register(a, api.Op{ID: "list-pipelines", Method: http.MethodGet, Path: "/projects/{id}/pipelines", Tags: tags,
		Summary: "A project's pipelines", Access: api.Public}, s.listPipelines)
	api.Register(a, api.Op{ID: "get-pipeline", Method: http.MethodGet, Path: "/projects/{id}/pipelines/{pipeline_id}", Tags: tags,
		Summary: "A single pipeline", Access: api.Public}, s.getPipeline)
	api.Register(a, api.Op{ID: "create-pipeline", Method: http.MethodPost, Path: "/projects/{id}/pipeline", Tags: tags,
		Summary: "Run a pipeline for a branch or tag", Access: api.SignedIn}, s.createPipelineAPI)
	api.Register(a, api.Op{ID: "retry-pipeline", Method: http.MethodPost, Path: "/projects/{id}/pipelines/{pipeline_id}/retry", Tags: tags,
		Summary: "Retry a pipeline's failed and canceled jobs", Access: api.SignedIn}, s.retryPipeline)
	api.Register(a, api.Op{ID: "cancel-pipeline", Method: http.MethodPost, Path: "/projects/{id}/pipelines/{pipeline_id}/cancel", Tags: tags,
		Summary: "Cancel a pipeline's unfinished jobs", Access: api.SignedIn, Status: http.StatusOK}, s.cancelPipeline)
}
