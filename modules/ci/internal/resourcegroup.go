package internal

// Resource groups (`resource_group`): jobs of one project whose groups
// are equal never run at once, across pipelines. A job that would become
// pending while another job of its group is pending or running waits as
// waiting_for_resource instead; when the holder finishes, one waiting
// job becomes pending. The state is the jobs' own statuses, filed by the
// "resource" index (holders and waiters by project and group), so it
// survives a restart, and every check and hand-over happens in the
// transaction that changed the job: bbolt serializes writers, so two
// jobs can never both take a free group. Runners and executors only ever
// see pending jobs, so neither is handed a job whose group is held.
//
// The order among waiters is GitLab's default process mode, unordered:
// here the oldest job (lowest id) goes first.

import (
	"strings"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// StatusWaitingForResource is a job whose resource group is held.
const StatusWaitingForResource = "waiting_for_resource"

// resourceKeys files a job of a resource group in the "resource" index:
// as a holder while pending or running, as a waiter while waiting.
func resourceKeys(j *Job) []string {
	if j.ResourceGroup == "" || j.Retried || j.Bridge {
		return nil
	}
	switch j.Status {
	case StatusPending, StatusRunning:
		return []string{resourceKey("held", j.ProjectID, j.ResourceGroup)}
	case StatusWaitingForResource:
		return []string{resourceKey("wait", j.ProjectID, j.ResourceGroup)}
	}
	return nil
}

func resourceKey(kind string, projectID int64, group string) string {
	return kind + "/" + store.IDString(projectID) + "/" + group
}

// expandResourceGroup is a job's resource group with the variables known
// when the pipeline is made, as its environment's name is expanded. A key
// GitLab would not store (blank or too long once expanded) leaves the job
// without a group, as GitLab's job then has none.
func (s *Service) expandResourceGroup(p *Pipeline, spec *pipeline.Job) string {
	if spec.ResourceGroup == "" {
		return ""
	}
	key := spec.ResourceGroup
	if strings.Contains(key, "$") {
		key = pipeline.ExpandVariables(key, s.creationVariables(p, spec))
	}
	key = strings.TrimSpace(key)
	if key == "" || len(key) > pipeline.MaxResourceGroupKey {
		return ""
	}
	return key
}

// gateResource runs on every change of a job's status (publishJob): a job
// that became pending while another holds its group waits instead, and a
// finished job lets the next waiter of its group go.
func (s *Service) gateResource(tx *store.Tx, j *Job) error {
	if j.ResourceGroup == "" || j.Bridge || j.Retried {
		return nil
	}
	switch {
	case j.Status == StatusPending:
		holders, err := jobs.IDsBy(tx, "resource", resourceKey("held", j.ProjectID, j.ResourceGroup))
		if err != nil {
			return err
		}
		for _, id := range holders {
			if id != j.ID {
				j.Status, j.QueuedAt = StatusWaitingForResource, nil
				return jobs.Update(tx, j)
			}
		}
	case finished(j.Status):
		return s.releaseResource(tx, j.ProjectID, j.ResourceGroup)
	}
	return nil
}

// releaseResource hands a free group to its oldest waiter, which becomes
// pending (and its pipeline is decided again).
func (s *Service) releaseResource(tx *store.Tx, projectID int64, group string) error {
	holders, err := jobs.IDsBy(tx, "resource", resourceKey("held", projectID, group))
	if err != nil || len(holders) > 0 {
		return err
	}
	waiters, err := jobs.IDsBy(tx, "resource", resourceKey("wait", projectID, group))
	if err != nil || len(waiters) == 0 {
		return err
	}
	next, err := jobs.Get(tx, minID(waiters))
	if err != nil {
		return err
	}
	now := s.now()
	next.Status, next.QueuedAt = StatusPending, &now
	if err := jobs.Update(tx, next); err != nil {
		return err
	}
	if err := s.publishJob(tx, next, nil); err != nil {
		return err
	}
	tx.OnCommit(s.wakeScheduler)
	return s.process(tx, next.PipelineID)
}

func minID(ids []int64) int64 {
	low := ids[0]
	for _, id := range ids[1:] {
		low = min(low, id)
	}
	return low
}
