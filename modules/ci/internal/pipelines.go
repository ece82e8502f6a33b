package internal

// The pipeline commands and readers of cicd.Service: what the pipelines
// API, and any page or program, does to a pipeline. No HTTP here
// (httppipelines.go is the API over it).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// Pipelines implements cicd.Service.
func (s *Service) Pipelines(ctx context.Context, project string, q cicd.PipelineQuery) ([]cicd.Pipeline, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return nil, 0, err
	}
	var userID int64 = -1
	if q.Username != "" {
		u, err := s.users.UserByUsername(ctx, q.Username)
		if err != nil {
			return []cicd.Pipeline{}, 0, nil
		}
		userID = u.ID
	}
	var list []*Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := pipelines.IDsBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			p, err := pipelines.Get(tx, id)
			if err != nil {
				return err
			}
			if keepPipeline(p, q, userID) {
				list = append(list, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	less := func(a, b *Pipeline) bool {
		switch q.OrderBy {
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
		if q.Ascending {
			return less(list[i], list[j])
		}
		return less(list[j], list[i])
	})
	out := []cicd.Pipeline{}
	for _, p := range store.Window(list, q.Offset, q.Limit) {
		out = append(out, pipelineRecord(p))
	}
	return out, len(list), nil
}

func keepPipeline(p *Pipeline, q cicd.PipelineQuery, userID int64) bool {
	switch q.Scope {
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
	if q.Status != "" && p.Status != q.Status {
		return false
	}
	if q.Ref != "" && p.Ref != q.Ref {
		return false
	}
	if q.YAMLErrors != nil && *q.YAMLErrors != (p.YAMLErrors != nil) {
		return false
	}
	return userID < 0 || p.UserID == userID
}

// Pipeline implements cicd.Service.
func (s *Service) Pipeline(ctx context.Context, project string, id cicd.PipelineID) (cicd.Pipeline, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return cicd.Pipeline{}, err
	}
	var p *Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		p, err = pipelineIn(tx, info.ID, int64(id))
		return err
	})
	if err != nil {
		return cicd.Pipeline{}, err
	}
	return pipelineRecord(p), nil
}

// CreatePipeline implements cicd.Service: a pipeline for the ref's head,
// as a push would have made.
func (s *Service) CreatePipeline(ctx context.Context, in cicd.CreatePipelineInput) (cicd.Pipeline, error) {
	info, err := s.access.Require(ctx, in.Project, projects.PushCode)
	if err != nil {
		return cicd.Pipeline{}, err
	}
	ref := strings.TrimSpace(in.Ref)
	if ref == "" {
		return cicd.Pipeline{}, cicd.ErrRefRequired
	}
	req := pipelineRequest{project: info, ref: ref, source: SourceAPI, userID: auth.FromContext(ctx).UserID()}
	if in.Web {
		req.source, req.dropOnErrors = string(pipeline.SourceWeb), true
	}
	if len(in.Variables) > 0 {
		// Kept sealed as a trigger's are (TriggerRequest without a
		// trigger), where the jobs read them (triggerVariables).
		sealed, vars, err := s.sealRunVariables(in.Variables)
		if err != nil {
			return cicd.Pipeline{}, err
		}
		req.variables = vars
		req.inserted = func(tx *store.Tx, p *Pipeline) error {
			return triggerRequests.Insert(tx, &TriggerRequest{PipelineID: p.ID, Variables: sealed, CreatedAt: s.now()})
		}
	}
	return s.runForRef(ctx, req)
}

// sealRunVariables checks a caller's variables and seals them for
// storing.
func (s *Service) sealRunVariables(in []cicd.Variable) (string, []pipeline.Variable, error) {
	vars := make([]pipeline.Variable, 0, len(in))
	for _, v := range in {
		if !variableKeyRule.MatchString(v.Key) {
			return "", nil, fmt.Errorf("%w: %q", cicd.ErrInvalidVariableKey, v.Key)
		}
		vars = append(vars, pipeline.Variable{Key: v.Key, Value: v.Value})
	}
	raw, err := json.Marshal(vars)
	if err != nil {
		return "", nil, err
	}
	return s.box.Seal(string(raw), purposeTriggerVariables), vars, nil
}

// runForRef makes the pipeline of req.ref's head as the principal of ctx
// (the caller, or a trigger's owner), who must be allowed to run it on a
// protected branch: such a pipeline gets the branch's protected
// variables. A name that is no branch is a tag (or nothing, which
// createForRefRequest refuses).
func (s *Service) runForRef(ctx context.Context, req pipelineRequest) (cicd.Pipeline, error) {
	branch, err := s.isBranch(ctx, req.project.ID, req.ref)
	if err != nil {
		return cicd.Pipeline{}, err
	}
	if err := s.mayControlRef(ctx, req.project.ID, req.ref, !branch); err != nil {
		return cicd.Pipeline{}, err
	}
	p, err := s.createForRefRequest(ctx, req)
	if err != nil {
		return cicd.Pipeline{}, err
	}
	return pipelineRecord(p), nil
}

// isBranch says whether a branch of that name exists (createForRef takes
// the branch when a tag has the same name).
func (s *Service) isBranch(ctx context.Context, projectID int64, name string) (bool, error) {
	_, err := s.git.Resolve(readAsCI(ctx), projectID, "refs/heads/"+name)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return false, nil
	}
	return err == nil, err
}

// RetryPipeline implements cicd.Service.
func (s *Service) RetryPipeline(ctx context.Context, project string, id cicd.PipelineID) (cicd.Pipeline, error) {
	return s.pipelineControl(ctx, project, id, func(tx *store.Tx, p *Pipeline, userID int64) error {
		return s.retryFailed(tx, p, userID)
	})
}

// CancelPipeline implements cicd.Service.
func (s *Service) CancelPipeline(ctx context.Context, project string, id cicd.PipelineID) (cicd.Pipeline, error) {
	return s.pipelineControl(ctx, project, id, func(tx *store.Tx, p *Pipeline, _ int64) error {
		return s.cancelAll(tx, p)
	})
}

func (s *Service) pipelineControl(ctx context.Context, project string, id cicd.PipelineID, op func(*store.Tx, *Pipeline, int64) error) (cicd.Pipeline, error) {
	info, err := s.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return cicd.Pipeline{}, err
	}
	// Before the write transaction, as for jobs (control); a pipeline's
	// ref never changes.
	var p *Pipeline
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		p, err = pipelineIn(tx, info.ID, int64(id))
		return err
	}); err != nil {
		return cicd.Pipeline{}, err
	}
	if err := s.mayControlRef(ctx, info.ID, p.Ref, p.Tag); err != nil {
		return cicd.Pipeline{}, err
	}
	userID := auth.FromContext(ctx).UserID()
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if p, err = pipelineIn(tx, info.ID, int64(id)); err != nil {
			return err
		}
		if err := op(tx, p, userID); err != nil {
			return err
		}
		p, err = pipelines.Get(tx, p.ID)
		return err
	})
	if err != nil {
		return cicd.Pipeline{}, err
	}
	s.nudge()
	return pipelineRecord(p), nil
}
