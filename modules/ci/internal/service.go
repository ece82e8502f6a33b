package internal

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	fconfig "github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/netguard"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/project"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/repository/release"
)

// Service is the CI module: pipelines and their jobs, the files jobs leave
// (traces, artifacts), environments and deployments.
type Service struct {
	db         *store.DB
	bus        *events.Bus
	access     projects.Access
	teams      projects.Teams
	users      identity.Users
	git        gitread.Reader // the CI file and refs, read as the server (readAsCI)
	statuses   repository.CommitStatuses
	protection repository.BranchProtection
	merges     repository.Merges
	releases   release.Service // makes release jobs' releases (release.go)
	// server is the server the jobs reach and whether it serves yet.
	server Server
	// http is the HTTP adapter's own state, set when its routes register
	// (httproutes.go); nothing but the adapter reads it.
	http    httpState
	version string
	sched   *scheduler
	// node marks the jobs this node's executors run (nil: none).
	node *fennec.Node
	box  *sealed.Box
	cfg  cicd.Config
	log  *zap.Logger
	// blobs holds traces, artifacts and reports under ci/.
	blobs blob.Store
	now   func() time.Time
	// wake nudges the scheduler when a job became pending.
	wake chan struct{}
	// runnersTokens finds a project by its runners_token (registration).
	runnersTokens projects.RunnersTokens
	// projects changes a project's shared runners switch (settings.go).
	projects project.Service
	// runnerQueue holds the runners' waiting job requests.
	runnerQueue *runnerQueue
	// runnerSeen is when each runner job last reported (trace or
	// keep-alive), in memory: a write per trace chunk would cost a commit
	// each; after a restart, the start counts as a report.
	runnerSeen   sync.Map // job id -> time.Time
	runnerBootAt time.Time
	// traceLocks serialize appends to a job's trace.
	traceLocks [64]sync.Mutex
	// traceWaits are the job pages' requests waiting for a trace to grow.
	traceWaits *traceWaits
	// reapEvery is how often expired artifacts are removed (reapInterval
	// unless a test shortens it before the app starts).
	reapEvery time.Duration
	// observeStep, when a test sets it, hears of each transaction that
	// stored or decided a chunk of a pipeline's jobs (SetStepObserver).
	observeStep func(Step)
	// decideWake wakes settleLoop: a pipeline has a stage left to decide.
	decideWake chan struct{}
	// stopWake wakes environmentStopLoop: an environment got a sooner
	// auto_stop_at.
	stopWake chan struct{}
	// delayWake wakes scheduledJobsLoop: a job was scheduled.
	delayWake chan struct{}
	// scheduleWake wakes scheduleLoop: a pipeline schedule changed.
	scheduleWake chan struct{}
	// bridgeWake wakes bridgeLoop: a trigger job became pending.
	bridgeWake chan struct{}
	// downstreamGate, when a test sets it, runs before each downstream
	// pipeline is made (SetDownstreamGate).
	downstreamGate func(context.Context) error
	// remote fetches `include: remote` files; nil unless ci.remote_includes.
	remote *remoteFetcher
}

// The service is the module's contract.
var _ cicd.Service = (*Service)(nil)

// Server is what the service knows of the server it runs in (the HTTP
// adapter gives it, NewServer): where jobs and runners reach it, and
// whether it serves yet.
type Server interface {
	// ExternalURL is the URL clients reach the server at (CI_SERVER_URL).
	ExternalURL() string
	// APIURL is the URL of its API (the artifacts downloads of jobs).
	APIURL() string
	// Ready says whether it serves; false again while it stops.
	Ready() bool
}

// Deps are what the service is built from (fx fills them).
type Deps struct {
	fennec.In
	DB         *store.DB
	Bus        *events.Bus
	Access     projects.Access
	Teams      projects.Teams
	Users      identity.Users
	Git        gitread.Reader
	Statuses   repository.CommitStatuses
	Protection repository.BranchProtection
	Merges     repository.Merges
	Releases   release.Service `optional:"true"`
	Runners    projects.RunnersTokens
	// Projects changes the project's shared runners switch for the CI/CD
	// settings page (the switch is the project's record).
	Projects project.Service
	Server   Server
	Box      *sealed.Box
	Blobs    blob.Store
	Core     fconfig.Config
	Config   cicd.Config
	Log      *zap.Logger
}

// NewService builds the module's service.
func NewService(d Deps) (*Service, error) {
	s := &Service{db: d.DB, bus: d.Bus, access: d.Access, teams: d.Teams, users: d.Users, git: d.Git, statuses: d.Statuses, protection: d.Protection, merges: d.Merges, releases: d.Releases, server: d.Server, box: d.Box, cfg: d.Config,
		log: d.Log.Named("ci"), blobs: d.Blobs, now: func() time.Time { return time.Now().UTC() },
		wake: make(chan struct{}, 1), reapEvery: reapInterval, runnersTokens: d.Runners, runnerQueue: newRunnerQueue(),
		scheduleWake: make(chan struct{}, 1), bridgeWake: make(chan struct{}, 1)}
	s.projects = d.Projects
	s.traceWaits = newTraceWaits(s.runnerQueue.draining)
	if d.Config.RemoteIncludes {
		s.remote = newRemoteFetcher(netguard.New(d.Core.AllowLocalRequests), remoteIncludeTimeout)
	}
	s.runnerBootAt = s.now()
	s.version, _ = fennec.Version()
	return s, nil
}

// SetReapInterval changes how often expired artifacts are removed; for
// tests, which cannot wait the production minute. Call it before the app
// starts (an fx.Invoke does).
func (s *Service) SetReapInterval(d time.Duration) { s.reapEvery = d }

// nudge wakes the scheduler without blocking (a job may have become
// pending: the runners' queue version moves too).
func (s *Service) nudge() {
	s.runnerQueue.bump()
	s.wakeScheduler()
}

// traceKey is the blob a job's trace is appended to.
func traceKey(jobID int64) string {
	return "ci/traces/" + shard(jobID) + "/" + strconv.FormatInt(jobID, 10) + ".log"
}

// artifactsKey is the blob a job's archive is kept in.
func artifactsKey(jobID int64) string {
	return "ci/artifacts/" + shard(jobID) + "/" + strconv.FormatInt(jobID, 10) + ".zip"
}

// shard spreads files over directories of at most a thousand job ids each.
func shard(id int64) string { return strconv.FormatInt(id/1000, 10) }

// jobIn loads a job of a project; a job of another project is not found.
func jobIn(tx *store.Tx, projectID int64, jobID int64) (*Job, error) {
	j, err := jobs.Get(tx, jobID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && j.ProjectID != projectID) {
		return nil, cicd.ErrJobNotFound
	}
	return j, err
}

// pipelineIn loads a pipeline of a project.
func pipelineIn(tx *store.Tx, projectID int64, id int64) (*Pipeline, error) {
	p, err := pipelines.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.ProjectID != projectID) {
		return nil, cicd.ErrPipelineNotFound
	}
	return p, err
}
