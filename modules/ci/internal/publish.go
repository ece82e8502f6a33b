package internal

import (
	"errors"
	"strconv"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/event"
	"github.com/fennec-forge/fennec/modules/repository"
)

// publishJob records a job's new status as a status of its commit and
// publishes its event, in the transaction that changed it. p may be nil
// (it is loaded for the before sha).
func (s *Service) publishJob(tx *store.Tx, j *Job, p *Pipeline) error {
	// The job page's waiting requests answer the new status once it is
	// committed (and readable).
	id := j.ID
	tx.OnCommit(func() { s.traceChanged(id) })
	if j.Status == StatusPending && s.node != nil && s.node.Shared() {
		if err := tx.Signal(pendingSignal, nil); err != nil {
			return err
		}
	}
	if p == nil {
		var err error
		if p, err = pipelines.Get(tx, j.PipelineID); err != nil {
			return err
		}
	}
	if err := s.gateDelay(tx, j); err != nil {
		return err
	}
	if err := s.gateResource(tx, j); err != nil {
		return err
	}
	err := s.statuses.Set(tx.Context(), repository.CommitStatus{ProjectID: j.ProjectID, SHA: j.SHA, Ref: j.Ref,
		Name: j.Name, Stage: j.Stage, State: j.Status, TargetURL: p.ProjectWebURL + "/-/jobs/" + strconv.FormatInt(j.ID, 10),
		Coverage: j.Coverage, AllowFailure: j.AllowFailure, AuthorID: j.UserID, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt})
	if err != nil {
		return err
	}
	if j.Bridge {
		// A trigger job is the server's: no job event, as GitLab sends
		// none for bridges; a pending one waits for bridgeLoop.
		if j.Status == StatusPending && j.DownstreamID == 0 {
			tx.OnCommit(s.wakeBridges)
		}
		return nil
	}
	ev := event.JobEvent{ObjectKind: "build", ProjectID: j.ProjectID, PipelineID: j.PipelineID, JobID: j.ID,
		Name: j.Name, Stage: j.Stage, Status: j.Status, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt,
		AllowFailure: j.AllowFailure, Ref: j.Ref, Tag: j.Tag, SHA: j.SHA, BeforeSHA: p.BeforeSHA, UserID: j.UserID, When: j.When}
	if j.Artifacts != nil {
		ev.Artifacts = &event.JobArtifacts{Filename: j.Artifacts.Filename, Size: j.Artifacts.Size}
	}
	if j.StartedAt != nil && j.FinishedAt != nil {
		d := j.FinishedAt.Sub(*j.StartedAt).Seconds()
		ev.Duration = &d
	}
	if j.RunnerID != 0 {
		// A runner removed since keeps its id out of the event: hooks show null.
		if r, err := runners.Get(tx, j.RunnerID); err == nil {
			ev.Runner = &event.JobRunner{ID: r.ID, Description: r.Description, Active: r.Active, IsShared: r.IsShared}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return s.bus.Publish(tx, ev)
}

// publishPipeline publishes a pipeline's new status.
func (s *Service) publishPipeline(tx *store.Tx, p *Pipeline) error {
	return s.bus.Publish(tx, event.PipelineEvent{ObjectKind: "pipeline", ProjectID: p.ProjectID, PipelineID: p.ID,
		Ref: p.Ref, Tag: p.Tag, SHA: p.SHA, BeforeSHA: p.BeforeSHA, Status: p.Status, Stages: p.Stages,
		CreatedAt: p.CreatedAt, FinishedAt: p.FinishedAt, Duration: p.Duration, UserID: p.UserID})
}
