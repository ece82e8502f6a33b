package ci

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/executors"
	"github.com/fennec-forge/fennec/modules/ci/event"
	"github.com/fennec-forge/fennec/modules/ci/internal"
)

// The events the module publishes; their contract is package event.
type (
	// JobEvent is published when a job's status changes.
	JobEvent = event.JobEvent
	// PipelineEvent is published when a pipeline's status changes.
	PipelineEvent = event.PipelineEvent
)

// Executors is where the scheduler finds places to run jobs; the stock
// host provides one over the executor plugins. Without one, jobs wait as
// pending.
type Executors = internal.Executors

// Slot is one reserved place on an executor.
type Slot = internal.Slot

// Pipelines is what other modules may ask CI about a commit's pipelines
// (the merge requests module: the head pipeline of a source branch, which
// decides whether a merge waits for it). CI answers from its own tables:
// a copy kept from its events would lag behind them.
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
}

// CommitPipeline is the pipeline Pipelines.Latest finds.
type CommitPipeline = internal.CommitPipeline

// Config is the module's section of the configuration ("ci").
type Config = internal.Config

// SectionName is the name of the module's configuration section.
const SectionName = "ci"

// Module is the CI module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("ci",
		fennec.ModuleConfig(SectionName, internal.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		executors.Option(),
		fx.Provide(internal.NewService),
		fx.Provide(internal.NewCommitPipelines, func(q *internal.CommitPipelines) Pipelines { return q }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideTokenResolver(internal.NewTokenResolver),
		fx.Invoke(internal.Start),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec),
		fennec.ProvideAdminCommands(internal.Commands, internal.RunnerCommandSpecs...),
	)
}
