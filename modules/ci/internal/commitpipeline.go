package internal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/repository"
)

// pushSubscriber is the name Subscribers gives onPush, the handler that
// makes a push's pipeline; Coming asks the outbox whether it still awaits
// a push.
const pushSubscriber = "ci.pipeline_on_push"

// CommitPipelines answers other modules' questions about the pipelines of
// a commit (merge requests: the head pipeline of a source branch), from
// CI's own tables, so that nobody has to wait for a copy that the outbox
// brings later.
type CommitPipelines struct {
	s    *Service
	refs repository.RefChanges
}

var _ cicd.Pipelines = (*CommitPipelines)(nil)

// NewCommitPipelines builds the queries over the service's store.
func NewCommitPipelines(s *Service, refs repository.RefChanges) *CommitPipelines {
	return &CommitPipelines{s: s, refs: refs}
}

// Latest is the newest pipeline of commit sha in project; ok is false when
// the commit has none. With a transaction in ctx it reads in it.
func (q *CommitPipelines) Latest(ctx context.Context, projectID int64, sha string) (p cicd.CommitPipeline, ok bool, err error) {
	err = q.s.db.View(ctx, func(tx *store.Tx) error {
		latest, err := latestPipeline(tx, projectID, sha)
		if err != nil || latest == nil {
			return err
		}
		p, ok = cicd.CommitPipeline{ID: cicd.PipelineID(latest.ID), Ref: latest.Ref, SHA: latest.SHA, Status: latest.Status}, true
		return nil
	})
	return p, ok, err
}

// latestPipeline is the newest pipeline of the commit that is not a
// child: a child pipeline is part of its parent's, whose status already
// follows it when it matters (strategy: depend), as GitLab's latest
// pipeline of a commit leaves children out.
func latestPipeline(tx *store.Tx, projectID int64, sha string) (*Pipeline, error) {
	ids, err := pipelines.IDsBy(tx, "commit", store.IDString(projectID)+"/"+sha)
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- { // ascending: the newest is last
		p, err := pipelines.Get(tx, ids[i])
		if err != nil || p.Source != SourceParentPipeline {
			return p, err
		}
	}
	return nil, nil
}

// Coming says whether commit sha of project, which has no pipeline yet,
// will get one that runs jobs: a push of branch to sha that onPush has not
// handled yet (its ref change still journaled, or its event still waiting
// for onPush in the outbox), in a project with jobs enabled, whose CI file
// gives the branch a job that runs without being played. It is false when
// the commit has a pipeline already (ask Latest).
//
// The pipeline, the journal and the outbox are read in one snapshot, and
// each push is in one of them at every instant (the journal's entry goes
// in the transaction that publishes the event, the event stays in the
// outbox until onPush has stored the pipeline), so the answer holds
// whenever it is asked. It reads the CI file from the repository: call it
// in a read transaction or none, not in a write.
//
// A merge request asks about its source's head: that commit also gets a
// merge request pipeline (MergeRequestPipeline) when the CI file gives merge
// request pipelines a job that runs by itself, and then one is coming
// whether or not the push is still on its way.
func (q *CommitPipelines) Coming(ctx context.Context, projectID int64, branch, sha string) (bool, error) {
	ref := "refs/heads/" + branch
	awaited, exists := false, false
	err := q.s.db.View(ctx, func(tx *store.Tx) error {
		awaited, exists = false, false
		if p, err := latestPipeline(tx, projectID, sha); err != nil || p != nil {
			exists = p != nil
			return err
		}
		pending, err := q.refs.RefChangePending(tx.Context(), projectID, ref, sha)
		if err != nil || pending {
			awaited = pending
			return err
		}
		awaited, err = q.s.bus.Awaits(tx, pushSubscriber, func(payload json.RawMessage) bool {
			if !bytes.Contains(payload, []byte(sha)) {
				return false // most events: decoding them is the scan's cost
			}
			var ev repository.PushEvent
			return json.Unmarshal(payload, &ev) == nil && ev.ProjectID == projectID && ev.Ref == ref && ev.After == sha
		})
		return err
	})
	if err != nil || exists {
		return false, err
	}
	if awaited {
		if runs, err := q.runsJobs(ctx, projectID, branch, sha, SourcePush); err != nil || runs {
			return runs, err
		}
	}
	// The merge request asking gets a pipeline of its own (MergeRequestPipeline)
	// when the CI file gives merge request pipelines jobs.
	return q.runsJobs(ctx, projectID, branch, sha, SourceMergeRequestEvent)
}

// MergeRequestPipeline implements cicd.Pipelines.
func (q *CommitPipelines) MergeRequestPipeline(ctx context.Context, mr cicd.MergeRequestRef) error {
	return q.s.mergeRequestPipeline(ctx, mr)
}

// runsJobs says whether onPush (or MergeRequestPipeline, by source)
// would make a pipeline of branch at sha with a job that runs by itself: a CI file with errors gives a failed
// pipeline, one with manual or on_failure jobs only gives one that waits
// or is skipped, neither of which anyone should wait for.
func (q *CommitPipelines) runsJobs(ctx context.Context, projectID int64, branch, sha, source string) (bool, error) {
	info, err := q.s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), projectID)
	if err != nil || !info.Features.JobsEnabled {
		return false, nil
	}
	src, _, err := q.s.readConfig(ctx, projectID, sha)
	if errors.Is(err, cicd.ErrNoConfig) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Read as the server: whoever pushed, a file that includes another
	// project is taken as making jobs rather than as merging at once.
	cfg, err := pipeline.ParseFiles(ctx, src, q.s.repoFiles(projectID, sha, auth.System()))
	if err != nil {
		return false, nil
	}
	// The jobs a push of the branch gets, decided as its pipeline's would
	// be (rules and only/except see the predefined and project
	// variables; the push's changes are unknown, so changes hold).
	p := &Pipeline{ProjectID: projectID, Ref: branch, SHA: sha, Source: source, ProjectPath: info.PathWithNamespace}
	ref, err := q.s.pipelineRef(ctx, cfg, p)
	if err != nil {
		return false, err
	}
	_, jobs, err := cfg.ForPipeline(ref, q.s.cfg.MaxPipelineJobs)
	if err != nil {
		return false, nil // filtered out by workflow rules, or too many jobs: no pipeline
	}
	for _, j := range jobs {
		if j.When == cistatus.WhenOnSuccess || j.When == cistatus.WhenAlways {
			return true, nil
		}
	}
	return false, nil
}
