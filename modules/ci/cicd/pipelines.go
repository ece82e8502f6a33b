package cicd

import "context"

// PipelineID is a pipeline's id (GitLab's, unique in the instance).
type PipelineID int64

// JobID is a job's id (GitLab's, unique in the instance).
type JobID int64

// Pipelines is what other modules may ask CI about a commit's pipelines
// (the merge requests module: the head pipeline of a source branch, which
// decides whether a merge waits for it). CI answers from its own tables:
// a copy kept from its events would lag behind them. No access check: the
// caller has checked the project.
type Pipelines interface {
	// Latest is the newest pipeline of commit sha in project; ok is false
	// when the commit has none. With a transaction in ctx it reads in it.
	Latest(ctx context.Context, projectID int64, sha string) (p CommitPipeline, ok bool, err error)
	// Coming says whether commit sha of project, which has no pipeline
	// yet, will get one that runs jobs: a push of branch to sha that CI
	// has not handled yet, whose CI file gives the branch a job. It is
	// exact whenever it is asked (a push is always in the ref journal,
	// in the outbox for CI, or handled), and false when the commit has a
	// pipeline already. It reads the CI file: not inside a write
	// transaction.
	Coming(ctx context.Context, projectID int64, branch, sha string) (bool, error)
	// MergeRequestPipeline makes the merge request pipeline (source
	// merge_request_event) of a merge request's source head, when the
	// CI file gives such a pipeline jobs and the merge request has none
	// of that commit yet; nothing otherwise (most files give none). A
	// fork's runs in the fork, as GitLab runs it by default. The merge requests module calls
	// it when one is opened, reopened or its source moves.
	MergeRequestPipeline(ctx context.Context, mr MergeRequestRef) error
}

// MergeRequestRef is the merge request a merge request pipeline runs for.
type MergeRequestRef struct {
	ID, IID         int64
	ProjectID       int64 // the target project
	SourceProjectID int64
	SourceBranch    string
	TargetBranch    string
	// SHA is the source head the merge request is at.
	SHA        string
	Title      string
	Labels     []string
	Draft      bool
	AssigneeID int64
	// UserID is who opened or moved it: the pipeline's user.
	UserID int64
}

// CommitPipeline is the pipeline Pipelines.Latest finds.
type CommitPipeline struct {
	ID     PipelineID
	Ref    string
	SHA    string
	Status string
}
