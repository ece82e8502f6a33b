package ci

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/executors"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
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

// The module's settings and its plug point for executors are defined by
// its contract, package cicd; they are named here too for the embedders
// and tests that configure the module.
type (
	// Config is the module's section of the configuration ("ci").
	Config = cicd.Config
	// Executors is where the scheduler finds places to run jobs; the
	// stock host provides one over the executor plugins. Without one,
	// jobs wait for GitLab Runners.
	Executors = cicd.Executors
	// Slot is one reserved place on an executor.
	Slot = cicd.Slot
)

// SectionName is the name of the module's configuration section.
const SectionName = "ci"

// Module is the CI module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("ci",
		fennec.ModuleConfig(SectionName, internal.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		executors.Option(),
		fennec.Provide(internal.NewService, internal.NewServer, func(s *internal.Service) cicd.Service { return s }),
		fennec.Provide(internal.NewCommitPipelines, func(q *internal.CommitPipelines) cicd.Pipelines { return q }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvidePages(internal.NewAdminStats),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideTokenResolver(internal.NewTokenResolver),
		fennec.Provide(internal.NewScheduler),
		fennec.Provide(internal.NewDispatcher),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec),
		fennec.ProvideAdminCommands(internal.Commands, internal.RunnerCommandSpecs...),
	)
}
