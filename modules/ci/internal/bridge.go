package internal

// Trigger jobs ("bridges"): a job with `trigger:` runs no command. When
// stage gating makes it pending, the server makes its downstream
// pipeline: a child of the same project at the same commit from the
// files it includes (source parent_pipeline), or the pipeline of another
// project's branch (source pipeline). A bridge is never in the queue of
// executors and runners (the "queue" index leaves it out); the pending
// ones wait in the "bridges" index for bridgeLoop, which makes their
// pipelines after the commit that decided them, so that no decision
// transaction waits for git. The downstream pipeline is stored and the
// bridge linked to it in one transaction (pipelineRequest.inserted), so
// a crash leaves either a pending bridge, made again at the next start,
// or both. With `strategy: depend` the bridge then mirrors the
// downstream pipeline's status, in the transaction of each change
// (mirrorUpstream, from process).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Pipeline sources of downstream pipelines.
const (
	SourceParentPipeline = string(pipeline.SourceParentPipeline)
	SourcePipeline       = string(pipeline.SourcePipeline)
)

// The bounds of a pipeline hierarchy, as GitLab sets them: child
// pipelines nest at most MaxChildDepth levels below the first pipeline
// that is not a child, and a hierarchy (a pipeline, its downstream
// pipelines and theirs, of every project) holds at most
// MaxHierarchyPipelines. The second also bounds chains of multi-project
// pipelines that trigger each other.
const (
	MaxChildDepth         = 2
	MaxHierarchyPipelines = 1000
)

// Failure reasons of a bridge, as GitLab names them.
const (
	reasonProjectNotFound      = "downstream_bridge_project_not_found"
	reasonNoPermission         = "insufficient_bridge_permissions"
	reasonCreationFailed       = "downstream_pipeline_creation_failed"
	reasonMaxDepth             = "reached_max_descendant_pipelines_depth"
	reasonHierarchyTooLarge    = "reached_max_pipeline_hierarchy_size"
	reasonLoop                 = "pipeline_loop_detected"
	purposeDownstreamVariables = "ci.downstream.variables"
)

// Upstream is what a downstream pipeline knows of the bridge that made
// it.
type Upstream struct {
	JobID      int64 `json:"job_id"`
	PipelineID int64 `json:"pipeline_id"`
	ProjectID  int64 `json:"project_id"`
	// RootID is the first pipeline of the hierarchy (the one with no
	// upstream); ChildDepth how many child levels this pipeline is below
	// the last pipeline of the chain that is not a child (0 for a
	// multi-project pipeline).
	RootID     int64 `json:"root_id"`
	ChildDepth int   `json:"child_depth"`
	// Depend: the bridge mirrors this pipeline's status.
	Depend bool `json:"depend,omitempty"`
	// Include are a child's CI files (its CI file is pipeline.ChildConfig
	// of them, read again if its creation must be resumed).
	Include []string `json:"include,omitempty"`
	// Variables are the variables the bridge passed, sealed (they may
	// hold forwarded secrets): the pipeline's run variables.
	Variables string `json:"variables,omitempty"`
}

// errBridgeMoved: the bridge is no longer pending without a downstream
// pipeline (canceled meanwhile, or made by another pass).
var errBridgeMoved = errors.New("ci: the bridge was decided meanwhile")

// wakeBridges tells bridgeLoop that a bridge is pending; it never blocks
// (commit hooks call it).
func (s *Service) wakeBridges() {
	select {
	case s.bridgeWake <- struct{}{}:
	default:
	}
}

// bridgeLoop makes the downstream pipelines of pending bridges: those a
// stopped server left, then each time one becomes pending, until ctx
// ends.
func (s *Service) bridgeLoop(ctx context.Context) {
	for {
		var ids []int64
		err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			ids, err = jobs.IDsBy(tx, "bridges", "waiting")
			return err
		})
		if err != nil && ctx.Err() == nil {
			s.log.Error("pending trigger jobs: not listed", zap.Error(err))
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return
			}
			if err := s.triggerDownstream(ctx, id); err != nil && !errors.Is(err, errBridgeMoved) && ctx.Err() == nil {
				// Not the file's fault (a read failed): the bridge stays
				// pending and is tried again at the next wake or start.
				s.log.Error("a trigger job's downstream pipeline could not be made", zap.Int64("job", id), zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.bridgeWake:
		}
	}
}

// pendingBridge loads a bridge that waits for its downstream pipeline,
// errBridgeMoved when it no longer does.
func pendingBridge(tx *store.Tx, id int64) (*Job, error) {
	j, err := jobs.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errBridgeMoved
	}
	if err != nil {
		return nil, err
	}
	if !j.Bridge || j.Status != StatusPending || j.DownstreamID != 0 || j.Retried {
		return nil, errBridgeMoved
	}
	return j, nil
}

// SetDownstreamGate has fn called before each downstream pipeline is
// made; an error it returns leaves the bridge pending. For tests, which
// stop a server between a bridge's decision and its pipeline; call it
// before the app starts.
func (s *Service) SetDownstreamGate(fn func(context.Context) error) { s.downstreamGate = fn }

// triggerDownstream makes the downstream pipeline of a pending bridge, or
// fails the bridge with GitLab's reason.
func (s *Service) triggerDownstream(ctx context.Context, id int64) error {
	if s.downstreamGate != nil {
		if err := s.downstreamGate(ctx); err != nil {
			return err
		}
	}
	var j *Job
	var up *Pipeline
	var family int
	loop := false
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = pendingBridge(tx, id); err != nil {
			return err
		}
		if up, err = pipelines.Get(tx, j.PipelineID); err != nil {
			return err
		}
		if loop, err = loopsBack(tx, up); err != nil {
			return err
		}
		members, err := pipelines.IDsBy(tx, "root", store.IDString(rootOf(up)))
		family = len(members) + 1 // the root is no member of its own index
		return err
	})
	if err != nil {
		return err
	}
	var spec pipeline.Job
	if err := json.Unmarshal(j.Spec, &spec); err != nil || spec.Trigger == nil {
		return s.failBridge(ctx, id, reasonCreationFailed)
	}
	t := spec.Trigger
	childDepth := 0
	if up.Upstream != nil && up.Source == SourceParentPipeline {
		childDepth = up.Upstream.ChildDepth
	}
	switch {
	case t.Child() && childDepth >= MaxChildDepth:
		return s.failBridge(ctx, id, reasonMaxDepth)
	case !t.Child() && loop:
		return s.failBridge(ctx, id, reasonLoop)
	case family >= MaxHierarchyPipelines:
		return s.failBridge(ctx, id, reasonHierarchyTooLarge)
	}
	vars, err := s.downstreamVariables(ctx, j, up, &spec)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(vars)
	if err != nil {
		return err
	}
	link := &Upstream{JobID: j.ID, PipelineID: up.ID, ProjectID: up.ProjectID, RootID: rootOf(up), Depend: t.Depend,
		Include: t.Include}
	if len(vars) > 0 {
		link.Variables = s.box.Seal(string(raw), purposeDownstreamVariables)
	}
	req := pipelineRequest{userID: j.UserID, upstream: link, variables: vars}
	req.inserted = func(tx *store.Tx, p *Pipeline) error { return s.linkDownstream(tx, id, p) }
	if t.Child() {
		link.ChildDepth = childDepth + 1
		info, err := s.access.ResolveID(readAsCI(ctx), up.ProjectID)
		if errors.Is(err, projects.ErrNotFound) {
			return s.failBridge(ctx, id, reasonCreationFailed) // its project is being removed
		}
		if err != nil {
			return err
		}
		req.project, req.ref, req.tag, req.sha, req.beforeSHA = info, up.Ref, up.Tag, up.SHA, up.BeforeSHA
		// A merge request pipeline's child runs for the merge request
		// too: its jobs get the CI_MERGE_REQUEST_* variables.
		req.source, req.mergeRequest = SourceParentPipeline, up.MergeRequest
		_, err = s.createPipeline(ctx, req)
		return s.afterDownstream(ctx, id, err)
	}
	uctx, info, reason, err := s.downstreamProject(ctx, j.UserID, t.Project)
	if err != nil {
		return err
	}
	if reason != "" {
		return s.failBridge(ctx, id, reason)
	}
	req.project, req.ref, req.source = info, t.Branch, SourcePipeline
	if req.ref == "" {
		req.ref = info.DefaultBranch
	}
	if err := s.mayControlRef(uctx, info.ID, req.ref, false); errors.Is(err, cicd.ErrProtectedRef) {
		return s.failBridge(ctx, id, reasonNoPermission)
	} else if err != nil {
		return err
	}
	_, err = s.createForRefRequest(uctx, req)
	return s.afterDownstream(ctx, id, err)
}

// afterDownstream fails the bridge when no downstream pipeline could be
// made for reasons of the downstream project or file (no such branch, no
// CI file, no job for the ref); other errors are returned.
func (s *Service) afterDownstream(ctx context.Context, id int64, err error) error {
	switch {
	case err == nil, errors.Is(err, errBridgeMoved):
		s.nudge()
		return err
	case errors.Is(err, cicd.ErrNoConfig), errors.Is(err, cicd.ErrNoJobs), errors.Is(err, cicd.ErrRefNotFound),
		errors.Is(err, errNotACommit):
		return s.failBridge(ctx, id, reasonCreationFailed)
	}
	return err
}

// downstreamProject resolves a multi-project trigger's project as the
// bridge's user, who must be allowed to run its pipelines: a reason for
// the bridge's failure when not.
func (s *Service) downstreamProject(ctx context.Context, userID int64, path string) (context.Context, projects.ProjectInfo, string, error) {
	u, err := s.users.UserByID(ctx, userID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, projects.ProjectInfo{}, reasonNoPermission, nil
	}
	if err != nil {
		return nil, projects.ProjectInfo{}, "", err
	}
	pr, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin,
		Blocked: u.State != "active", External: u.External})
	if err != nil {
		return nil, projects.ProjectInfo{}, reasonNoPermission, nil // blocked
	}
	ctx = auth.WithPrincipal(ctx, pr)
	info, err := s.access.Require(ctx, path, projects.PushCode)
	switch {
	case errors.Is(err, projects.ErrNotFound):
		return nil, projects.ProjectInfo{}, reasonProjectNotFound, nil
	case errors.Is(err, projects.ErrForbidden):
		return nil, projects.ProjectInfo{}, reasonNoPermission, nil
	}
	return ctx, info, "", err
}

// downstreamVariables are what a bridge passes down: its YAML variables
// (expanded with the variables known when its pipeline was made) unless
// forward says otherwise, then, with forward: pipeline_variables, the
// variables its own pipeline was run with.
func (s *Service) downstreamVariables(ctx context.Context, j *Job, up *Pipeline, spec *pipeline.Job) ([]pipeline.Variable, error) {
	var out []pipeline.Variable
	if spec.Trigger.ForwardYAMLVariables && len(spec.Variables) > 0 {
		facts := pipeline.JobFacts{ServerURL: s.server.ExternalURL(), JobName: j.Name, JobStage: j.Stage,
			CommitSHA: up.SHA, BeforeSHA: up.BeforeSHA, RefName: up.Ref, IsTag: up.Tag, PipelineID: up.ID,
			ProjectID: up.ProjectID, ProjectPath: up.ProjectPath, UserID: j.UserID, PipelineSource: pipeline.Source(up.Source)}
		known := pipeline.Layers{Predefined: pipeline.Predefined(facts), YAML: spec.Variables}.Resolve()
		for _, v := range spec.Variables {
			out = append(out, pipeline.Variable{Key: v.Key, Value: pipeline.ExpandVariables(v.Value, known), Public: true})
		}
	}
	if spec.Trigger.ForwardPipelineVariables {
		run, err := s.pipelineRunVariables(ctx, up)
		if err != nil {
			return nil, err
		}
		out = append(out, run...)
	}
	return out, nil
}

// upstreamVariables are the variables a downstream pipeline was run with.
func (s *Service) upstreamVariables(p *Pipeline) ([]pipeline.Variable, error) {
	if p.Upstream.Variables == "" {
		return nil, nil
	}
	plain, err := s.box.Unseal(p.Upstream.Variables, purposeDownstreamVariables)
	if err != nil {
		return nil, fmt.Errorf("ci: pipeline %d: its upstream's variables: %w", p.ID, err)
	}
	var vars []pipeline.Variable
	if err := json.Unmarshal([]byte(plain), &vars); err != nil {
		return nil, fmt.Errorf("ci: pipeline %d: its upstream's variables: %w", p.ID, err)
	}
	return vars, nil
}

// loopsBack says whether the pipelines from p up its chain of upstreams
// (children left out) run one project's ref from one source more than
// twice: projects that trigger each other, A -> B -> A -> B -> A, which
// GitLab stops there (pipeline_loop_detected) rather than at the
// hierarchy's size. The chain is at most MaxHierarchyPipelines long.
func loopsBack(tx *store.Tx, p *Pipeline) (bool, error) {
	type run struct {
		project     int64
		ref, source string
	}
	seen := map[run]int{}
	for i := 0; p != nil && i <= MaxHierarchyPipelines; i++ {
		if p.Source != SourceParentPipeline {
			k := run{p.ProjectID, p.Ref, p.Source}
			if seen[k]++; seen[k] > 2 {
				return true, nil
			}
		}
		if p.Upstream == nil {
			return false, nil
		}
		next, err := pipelines.Get(tx, p.Upstream.PipelineID)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		p = next
	}
	return false, nil
}

// rootOf is the first pipeline of p's hierarchy.
func rootOf(p *Pipeline) int64 {
	if p.Upstream != nil {
		return p.Upstream.RootID
	}
	return p.ID
}

// linkDownstream runs in the transaction that stores a bridge's
// downstream pipeline p: the bridge names it and, unless it mirrors it,
// is decided at once (success; failed when p failed at creation).
func (s *Service) linkDownstream(tx *store.Tx, id int64, p *Pipeline) error {
	j, err := pendingBridge(tx, id)
	if err != nil {
		return err // rolls the pipeline back with it
	}
	now := s.now()
	j.DownstreamID, j.StartedAt = p.ID, &now
	switch {
	case p.YAMLErrors != nil:
		j.Status, j.FinishedAt, j.FailureReason = StatusFailed, &now, reasonCreationFailed
	case p.Upstream.Depend:
		j.Status = StatusRunning // mirrorUpstream follows p from here
	default:
		j.Status, j.FinishedAt = StatusSuccess, &now
	}
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	if err := s.publishJob(tx, j, nil); err != nil {
		return err
	}
	return s.process(tx, j.PipelineID)
}

// failBridge fails a pending bridge that made no pipeline.
func (s *Service) failBridge(ctx context.Context, id int64, reason string) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		j, err := pendingBridge(tx, id)
		if err != nil {
			return err
		}
		return s.finish(tx, j, StatusFailed, reason)
	})
	if err == nil {
		s.nudge()
	}
	return err
}

// mirrorUpstream gives a depend bridge the status of its downstream
// pipeline p, which has just changed, in the same transaction: running
// while p is not finished, then p's final status. A finished bridge
// whose downstream pipeline runs again (a job of it retried) runs again
// too, and the jobs its end had skipped are decided anew, as GitLab does
// since 13.5; a bridge that was itself retried keeps its own status.
func (s *Service) mirrorUpstream(tx *store.Tx, p *Pipeline) error {
	if p.Upstream == nil || !p.Upstream.Depend {
		return nil
	}
	j, err := jobs.Get(tx, p.Upstream.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.Retried || j.DownstreamID != p.ID {
		return nil
	}
	status := p.Status
	if !finished(status) {
		status = StatusRunning
	}
	if status == j.Status || (finished(j.Status) && finished(status)) {
		return nil
	}
	if finished(j.Status) {
		return s.reopenBridge(tx, j)
	}
	if !finished(status) {
		j.Status = status
		if err := jobs.Update(tx, j); err != nil {
			return err
		}
		if err := s.publishJob(tx, j, nil); err != nil {
			return err
		}
		return s.process(tx, j.PipelineID)
	}
	return s.finish(tx, j, status, "")
}

// reopenBridge sets a finished bridge running again, its downstream
// pipeline running again, and lets the jobs of later stages that its end
// skipped be decided again once it ends.
func (s *Service) reopenBridge(tx *store.Tx, j *Job) error {
	j.Status, j.FinishedAt, j.FailureReason = StatusRunning, nil, ""
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	if err := s.publishJob(tx, j, nil); err != nil {
		return err
	}
	list, err := latestJobs(tx, j.PipelineID)
	if err != nil {
		return err
	}
	for _, later := range list {
		if later.Status == StatusSkipped && later.StageIdx > j.StageIdx {
			later.Status = StatusCreated
			if err := jobs.Update(tx, later); err != nil {
				return err
			}
		}
	}
	return s.process(tx, j.PipelineID)
}

// cancelDownstream cancels what a bridge being canceled started: its
// child pipeline, and a multi-project pipeline it mirrors. GitLab cancels
// a parent's children with it; an independent multi-project pipeline
// runs on.
func (s *Service) cancelDownstream(tx *store.Tx, j *Job) error {
	if !j.Bridge || j.DownstreamID == 0 {
		return nil
	}
	p, err := pipelines.Get(tx, j.DownstreamID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if finished(p.Status) || p.Upstream == nil || (p.Source != SourceParentPipeline && !p.Upstream.Depend) {
		return nil
	}
	return s.cancelAll(tx, p)
}
