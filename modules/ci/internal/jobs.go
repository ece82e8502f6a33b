package internal

// The job commands and readers of cicd.Service: what the jobs API, and
// any page or program, does to a job. No HTTP here (httpjobs.go is the
// API over it).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

var jobScopes = map[string]bool{StatusCreated: true, StatusPending: true, StatusRunning: true, StatusFailed: true,
	StatusSuccess: true, StatusCanceled: true, StatusSkipped: true, StatusManual: true, StatusWaitingForResource: true,
	StatusScheduled: true}

// scopeFilter checks scope values; nil means every job.
func scopeFilter(scope []string) (map[string]bool, error) {
	if len(scope) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, s := range scope {
		if !jobScopes[s] {
			return nil, fmt.Errorf("%w: %q", cicd.ErrInvalidScope, s)
		}
		want[s] = true
	}
	return want, nil
}

// Jobs implements cicd.Service: a project's or a pipeline's jobs, newest
// first.
func (s *Service) Jobs(ctx context.Context, project string, q cicd.JobQuery) ([]cicd.Job, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return nil, 0, err
	}
	want, err := scopeFilter(q.Scope)
	if err != nil {
		return nil, 0, err
	}
	var list, page []*Job
	var owners, downstream map[int64]*Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var ids []int64
		if q.Pipeline != 0 {
			if _, err := pipelineIn(tx, info.ID, int64(q.Pipeline)); err != nil {
				return err
			}
			ids, err = jobs.IDsBy(tx, "pipeline", store.IDString(int64(q.Pipeline)))
		} else {
			ids, err = jobs.IDsBy(tx, "project", store.IDString(info.ID))
		}
		if err != nil {
			return err
		}
		for i := len(ids) - 1; i >= 0; i-- {
			j, err := jobs.Get(tx, ids[i])
			if err != nil {
				return err
			}
			if j.Bridge == q.Bridges && (want == nil || want[j.Status]) {
				list = append(list, j)
			}
		}
		// Only the page's pipelines are read.
		page = store.Window(list, q.Offset, q.Limit)
		if owners, err = pipelinesOf(tx, page); err != nil || !q.Bridges {
			return err
		}
		downstream, err = downstreamOf(tx, page)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]cicd.Job, 0, len(page))
	for _, j := range page {
		rec := jobRecord(j, owners[j.PipelineID])
		if d := downstream[j.DownstreamID]; d != nil {
			rec.Downstream = downstreamRecord(d)
		}
		out = append(out, rec)
	}
	return out, len(list), nil
}

// loadJob checks the caller may do a on the project and loads the job with
// its pipeline.
func (s *Service) loadJob(ctx context.Context, project string, id cicd.JobID, a projects.Action) (projects.ProjectInfo, *Job, *Pipeline, error) {
	info, err := s.access.Require(ctx, project, a)
	if err != nil {
		return info, nil, nil, err
	}
	var j *Job
	var p *Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = jobIn(tx, info.ID, int64(id)); err != nil {
			return err
		}
		p, err = pipelines.Get(tx, j.PipelineID)
		return err
	})
	return info, j, p, err
}

// Job implements cicd.Service.
func (s *Service) Job(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	_, j, p, err := s.loadJob(ctx, project, id, projects.ReadJobs)
	if err != nil {
		return cicd.Job{}, err
	}
	if j.Bridge {
		// GitLab's single job is a build's: a trigger job is listed with
		// its pipeline's bridges only.
		return cicd.Job{}, fmt.Errorf("%w: %d is a trigger job", cicd.ErrJobNotFound, id)
	}
	return jobRecord(j, p), nil
}

// mayControlRef is GitLab's rule for acting on the jobs and pipelines of
// a protected branch (play, retry, cancel, keep, erase, run a pipeline):
// the caller must be allowed to push or merge to it, as a Developer is to
// any other branch. A job of a protected branch gets the protected
// variables (a production deploy's credentials), and a job played or
// retried runs as whoever did it. Tags are never protected here (their
// jobs get no protected variables, see handover).
func (s *Service) mayControlRef(ctx context.Context, projectID int64, ref string, tag bool) error {
	if tag {
		return nil
	}
	ok, err := s.merges.MayMerge(ctx, projectID, ref)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w %q", cicd.ErrProtectedRef, ref)
	}
	return nil
}

// eraser says who may erase jobs: Masters, and the job's own user (who
// pushed, played or retried it), as in GitLab; other Developers may not
// destroy someone else's log and artifacts.
func eraser(ctx context.Context, info projects.ProjectInfo, j *Job) error {
	if info.Level >= projects.Master || (j.UserID != 0 && j.UserID == auth.FromContext(ctx).UserID()) {
		return nil
	}
	return cicd.ErrMayNotErase
}

// control runs one of the job operations (cancel, retry, erase, keep,
// play) in a transaction and returns the job it leaves. Each needs
// Developer and the right to push or merge to the job's ref when it is
// protected (mayControlRef); allow, when given, adds the operation's own
// rule.
func (s *Service) control(ctx context.Context, project string, id cicd.JobID, allow func(context.Context, projects.ProjectInfo, *Job) error,
	op func(tx *store.Tx, j *Job) (*Job, error)) (cicd.Job, error) {
	info, err := s.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return cicd.Job{}, err
	}
	// Checked before the write transaction (the protection is read from
	// the repository module's store): a job's ref and user, which the
	// checks read, never change.
	var before *Job
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		before, err = jobIn(tx, info.ID, int64(id))
		return err
	}); err != nil {
		return cicd.Job{}, err
	}
	if err := s.mayControlRef(ctx, info.ID, before.Ref, before.Tag); err != nil {
		return cicd.Job{}, err
	}
	if allow != nil {
		if err := allow(ctx, info, before); err != nil {
			return cicd.Job{}, err
		}
	}
	var out *Job
	var p *Pipeline
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		j, err := jobIn(tx, info.ID, int64(id))
		if err != nil {
			return err
		}
		if out, err = op(tx, j); err != nil {
			return err
		}
		p, err = pipelines.Get(tx, out.PipelineID)
		return err
	})
	if err != nil {
		return cicd.Job{}, err
	}
	s.nudge()
	return jobRecord(out, p), nil
}

// CancelJob implements cicd.Service.
func (s *Service) CancelJob(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	return s.control(ctx, project, id, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if !active(j.Status) {
			return j, nil // nothing to stop: the job as it is
		}
		return j, s.cancel(tx, j)
	})
}

// RetryJob implements cicd.Service. The CI file's automatic retry of a
// failed job is the same clone (retry), made in the transaction that
// records the failure, with no caller to ask.
func (s *Service) RetryJob(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	pr := auth.FromContext(ctx)
	return s.control(ctx, project, id, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if !retryable(j) {
			return nil, cicd.ErrNotRetryable
		}
		return s.retry(tx, j, pr.UserID())
	})
}

// EraseJob implements cicd.Service.
func (s *Service) EraseJob(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	pr := auth.FromContext(ctx)
	return s.control(ctx, project, id, eraser, func(tx *store.Tx, j *Job) (*Job, error) {
		if !finished(j.Status) || j.ErasedAt != nil || (j.Artifacts == nil && j.TraceBytes == 0) {
			return nil, cicd.ErrNotErasable
		}
		now := s.now()
		j.ErasedAt, j.ErasedBy, j.Artifacts, j.TraceBytes = &now, pr.UserID(), nil, 0
		// The files go once the row says so, outside the group commit's
		// leader that runs commit hooks.
		if err := jobs.Update(tx, j); err != nil {
			return nil, err
		}
		id := j.ID
		tx.OnCommit(func() {
			go func() {
				ctx := context.Background()
				_ = s.blobs.Delete(ctx, artifactsKey(id))
				_ = s.blobs.Delete(ctx, traceKey(id))
				s.removeReports(ctx, id)
			}()
		})
		return j, nil
	})
}

// KeepArtifacts implements cicd.Service.
func (s *Service) KeepArtifacts(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	return s.control(ctx, project, id, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if j.Artifacts == nil {
			return nil, cicd.ErrNoArtifacts
		}
		j.Artifacts.Kept, j.Artifacts.ExpireAt = true, nil
		return j, jobs.Update(tx, j)
	})
}

// PlayJob implements cicd.Service.
func (s *Service) PlayJob(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	pr := auth.FromContext(ctx)
	return s.control(ctx, project, id, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if j.Status != StatusManual && j.Status != StatusScheduled {
			return nil, cicd.ErrNotPlayable
		}
		return j, s.play(tx, j, pr.UserID())
	})
}

// UnscheduleJob implements cicd.Service: who may play a job may
// unschedule it.
func (s *Service) UnscheduleJob(ctx context.Context, project string, id cicd.JobID) (cicd.Job, error) {
	return s.control(ctx, project, id, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if j.Status != StatusScheduled {
			return nil, cicd.ErrNotScheduled
		}
		return j, s.unschedule(tx, j)
	})
}

// retryable: a finished job that ran (or could run) a script.
func retryable(j *Job) bool {
	return slices.Contains([]string{StatusSuccess, StatusFailed, StatusCanceled}, j.Status) && !j.Retried
}

// jobRecord is a job as the contract shows it; p is its pipeline, nil
// when it could not be read (the record's PipelineStatus is then "").
func jobRecord(j *Job, p *Pipeline) cicd.Job {
	out := cicd.Job{ID: cicd.JobID(j.ID), ProjectID: j.ProjectID, PipelineID: cicd.PipelineID(j.PipelineID),
		Name: j.Name, Stage: j.Stage, Ref: j.Ref, Tag: j.Tag, SHA: j.SHA, Status: j.Status, When: j.When,
		AllowFailure: j.AllowFailure, UserID: j.UserID, RunnerID: j.RunnerID, Coverage: j.Coverage,
		CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt, ErasedAt: j.ErasedAt, Retried: j.Retried,
		FailureReason: j.FailureReason}
	if a := j.Artifacts; a != nil {
		out.Artifacts = &cicd.Artifacts{Filename: a.Filename, Size: a.Size, ExpireAt: a.ExpireAt, Kept: a.Kept}
	}
	if p != nil {
		out.PipelineStatus, out.Commit = p.Status, commitRecord(p.Commit)
	}
	return out
}

func commitRecord(c CommitSummary) cicd.Commit {
	return cicd.Commit{ID: c.ID, ShortID: c.ShortID, Title: c.Title, Message: c.Message, AuthorName: c.AuthorName,
		AuthorEmail: c.AuthorEmail, CreatedAt: c.CreatedAt}
}

// pipelineRecord is a pipeline as the contract shows it.
func pipelineRecord(p *Pipeline) cicd.Pipeline {
	out := cicd.Pipeline{ID: cicd.PipelineID(p.ID), ProjectID: p.ProjectID, Ref: p.Ref, Tag: p.Tag, SHA: p.SHA,
		BeforeSHA: p.BeforeSHA, Source: p.Source, Name: p.Name, Status: p.Status, YAMLErrors: p.YAMLErrors, Stages: p.Stages,
		UserID: p.UserID, Coverage: p.Coverage, Duration: p.Duration, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		StartedAt: p.StartedAt, FinishedAt: p.FinishedAt, CommittedAt: p.CommittedAt, Commit: commitRecord(p.Commit)}
	if mr := p.MergeRequest; mr != nil {
		out.MergeRequestIID, out.MergeRequestProject = mr.IID, mr.ProjectPath
	}
	return out
}

// downstreamRecord is a trigger job's downstream pipeline as the contract
// shows it.
func downstreamRecord(p *Pipeline) *cicd.DownstreamPipeline {
	return &cicd.DownstreamPipeline{ID: cicd.PipelineID(p.ID), ProjectID: p.ProjectID, SHA: p.SHA, Ref: p.Ref,
		Status: p.Status, Source: p.Source, WebURL: p.ProjectWebURL + "/-/pipelines/" + strconv.FormatInt(p.ID, 10),
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// downstreamOf loads the downstream pipelines of trigger jobs, each once.
func downstreamOf(tx *store.Tx, list []*Job) (map[int64]*Pipeline, error) {
	byID := map[int64]*Pipeline{}
	for _, j := range list {
		if j.DownstreamID == 0 || byID[j.DownstreamID] != nil {
			continue
		}
		p, err := pipelines.Get(tx, j.DownstreamID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		byID[p.ID] = p
	}
	return byID, nil
}

// pipelinesOf loads the pipelines of jobs, each once.
func pipelinesOf(tx *store.Tx, list []*Job) (map[int64]*Pipeline, error) {
	byID := map[int64]*Pipeline{}
	for _, j := range list {
		if _, ok := byID[j.PipelineID]; ok {
			continue
		}
		p, err := pipelines.Get(tx, j.PipelineID)
		if err != nil {
			return nil, err
		}
		byID[j.PipelineID] = p
	}
	return byID, nil
}
