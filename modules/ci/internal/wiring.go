package internal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/executors"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	projectevent "github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// Subscribers are the module's event handlers: a pipeline for every
// pushed branch or tag whose commit has a .gitlab-ci.yml, and a deleted
// group's variables deleted with it.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Subscribe("ci.pipeline_on_push", s.onPush),
		events.Only(events.SubscribeInTx("ci.group_deleted", s.onGroupDeleted), func(ev projectevent.GroupEvent) bool {
			return ev.Action == projectevent.GroupDeleted
		}),
	}
}

// onPush creates the pipeline of a push. The outbox may deliver an event
// again after a crash: a pipeline for the same push (ref, before, after)
// is not made twice.
func (s *Service) onPush(ctx context.Context, ev repository.PushEvent) error {
	if ev.Deleted() {
		return nil
	}
	ref, tag := strings.CutPrefix(ev.Ref, "refs/tags/")
	if !tag {
		var ok bool
		if ref, ok = strings.CutPrefix(ev.Ref, "refs/heads/"); !ok {
			return nil
		}
	}
	ctx = auth.WithPrincipal(ctx, auth.System())
	info, err := s.access.ResolveID(ctx, ev.ProjectID)
	if err != nil {
		s.log.Info("no pipeline: project gone", zap.Int64("project", ev.ProjectID), zap.Error(err))
		return nil
	}
	if !info.Features.JobsEnabled {
		return nil
	}
	sha := ev.After
	if tag {
		// An annotated tag's push names the tag object; the pipeline runs
		// the commit it points at. A tag of a tree or a blob has no CI
		// file of a commit: no pipeline (its push is handled, not retried).
		var err error
		sha, err = s.git.Resolve(ctx, ev.ProjectID, ev.After)
		if errors.Is(err, gitread.ErrRevisionNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	if done, err := s.pipelineExists(ctx, ev.ProjectID, ref, ev.Before, sha); err != nil || done {
		return err
	}
	_, err = s.createPipeline(ctx, pipelineRequest{project: info, ref: ref, tag: tag, sha: sha,
		beforeSHA: ev.Before, source: SourcePush, userID: ev.UserID})
	if errors.Is(err, cicd.ErrNoConfig) || errors.Is(err, cicd.ErrNoJobs) {
		return nil
	}
	return err
}

// mergeRequestPipeline makes a merge request pipeline (source
// merge_request_event, of the source branch's head, a detached pipeline
// in GitLab's words; cicd.Pipelines.MergeRequestPipeline) when the CI
// file gives such a pipeline jobs: those whose
// rules ask for merge_request_event, or whose only names merge_requests.
// Most files give none, and nothing is made. One pipeline per merge
// request and commit: a redelivered or attribute-only update makes none.
//
// A fork's merge request gets its pipeline in the fork.
func (s *Service) mergeRequestPipeline(ctx context.Context, m cicd.MergeRequestRef) error {
	if m.SHA == "" {
		return nil
	}
	ctx = auth.WithPrincipal(ctx, auth.System())
	target, err := s.access.ResolveID(ctx, m.ProjectID)
	if err != nil {
		return nil
	}
	info, fork := target, m.SourceProjectID != m.ProjectID
	if fork {
		// A fork's merge request pipeline runs in the fork, as GitLab runs
		// it by default: the fork's code with the fork's variables and
		// runners, never the target's secrets.
		if info, err = s.access.ResolveID(ctx, m.SourceProjectID); err != nil {
			return nil
		}
	}
	if !info.Features.JobsEnabled {
		return nil
	}
	// The event may be older than the branch: make the pipeline of the
	// commit the event names only while it is the source's head.
	head, err := s.git.Resolve(readAsCI(ctx), m.SourceProjectID, "refs/heads/"+m.SourceBranch)
	if err != nil || head != m.SHA {
		return nil
	}
	if done, err := s.mergeRequestPipelineExists(ctx, info.ID, m.IID, m.SHA); err != nil || done {
		return err
	}
	targetProtected := false
	if !fork {
		if targetProtected, err = s.protection.IsProtected(ctx, info.ID, m.TargetBranch); err != nil {
			return err
		}
	}
	facts := &pipeline.MergeRequestFacts{ID: m.ID, IID: m.IID, ProjectID: target.ID, ProjectPath: target.PathWithNamespace,
		Title: m.Title, Labels: m.Labels, Draft: m.Draft,
		SourceBranch: m.SourceBranch, SourceProjectID: m.SourceProjectID, SourceProjectPath: info.PathWithNamespace,
		TargetBranch: m.TargetBranch, TargetProtected: targetProtected}
	if m.AssigneeID != 0 {
		if u, err := s.users.UserByID(ctx, m.AssigneeID); err == nil {
			facts.Assignees = []string{u.Username}
		}
	}
	if base, err := s.git.Resolve(readAsCI(ctx), info.ID, "refs/heads/"+m.TargetBranch); err == nil && !fork {
		facts.DiffBaseSHA = s.mergeBase(ctx, info.ID, base, m.SHA)
	}
	_, err = s.createPipeline(ctx, pipelineRequest{project: info, ref: m.SourceBranch, sha: m.SHA,
		source: SourceMergeRequestEvent, userID: m.UserID, mergeRequest: facts})
	if errors.Is(err, cicd.ErrNoConfig) || errors.Is(err, cicd.ErrNoJobs) {
		return nil
	}
	return err
}

// mergeBase is where head's history meets base's: the first parent
// outside head's own commits (those not in base's history), which for a
// branch forked once from base is their merge base; head itself when it
// is in base's history; "" when it cannot be told.
func (s *Service) mergeBase(ctx context.Context, projectID int64, base, head string) string {
	own, err := s.merges.Commits(readAsCI(ctx), projectID, base, head, 10_000)
	if err != nil {
		return ""
	}
	if len(own) == 0 {
		return head
	}
	mine := make(map[string]bool, len(own))
	for _, c := range own {
		mine[c.ID] = true
	}
	for i := len(own) - 1; i >= 0; i-- { // oldest first
		for _, parent := range own[i].ParentIDs {
			if !mine[parent] {
				return parent
			}
		}
	}
	return ""
}

// mergeRequestPipelineExists says whether merge request iid of project
// has a pipeline of sha already.
func (s *Service) mergeRequestPipelineExists(ctx context.Context, projectID, iid int64, sha string) (bool, error) {
	found := false
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := pipelines.IDsBy(tx, "commit", store.IDString(projectID)+"/"+sha)
		if err != nil {
			return err
		}
		for _, id := range ids {
			p, err := pipelines.Get(tx, id)
			if err != nil {
				return err
			}
			if p.Source == SourceMergeRequestEvent && p.MergeRequest != nil && p.MergeRequest.IID == iid {
				found = true
			}
		}
		return nil
	})
	return found, err
}

// TokenResolver lets a running job's CI_JOB_TOKEN authenticate git over
// HTTP as gitlab-ci-token (with any other user name it is no token): the
// rights of the job's user, for reading its own project's repository only,
// and only while the job runs.
//
// Own project only is stricter than "whatever the job's user may read",
// and deliberately so. The token is handed to every line of the job's
// script, written by anybody who may push a branch, and its trace may be
// public; with the user's rights it opened every private repository of
// whoever pushed, or played, the job. Fennec has no cross-project
// pipelines or job token allowlist, so no job needs another project's
// private code through it; GitLab itself now limits the token to the
// projects in the target's allowlist, which by default holds only the
// project itself. Other public projects stay readable, as they are to
// anyone.
// It reads the store alone: the API (which the service uses) is built on
// the resolvers.
type TokenResolver struct {
	db    *store.DB
	users auth.UserLookup
}

// TokenResolverDeps are what NewTokenResolver is built from.
type TokenResolverDeps struct {
	fennec.In
	DB    *store.DB
	Users auth.UserLookup
}

// NewTokenResolver builds the job token resolver.
func NewTokenResolver(d TokenResolverDeps) *TokenResolver {
	db, users := d.DB, d.Users
	return &TokenResolver{db: db, users: users}
}

// ResolveToken implements auth.TokenResolver.
func (r *TokenResolver) ResolveToken(ctx context.Context, kind auth.TokenKind, secret string) (*auth.Principal, error) {
	if kind != auth.KindBasic || auth.BasicUserFrom(ctx) != pipeline.RegistryUser {
		return nil, auth.ErrUnknownToken
	}
	j, err := runningJobByToken(ctx, r.db, secret)
	if err != nil {
		return nil, auth.ErrUnknownToken
	}
	u, err := r.users.LookupUser(ctx, store.IDString(j.UserID))
	if err != nil {
		return nil, auth.ErrUnauthorized
	}
	return &auth.Principal{User: u, Method: auth.MethodJobToken, Scopes: []string{auth.ScopeReadRepository},
		Project: j.ProjectID}, nil
}

// SchedulerDeps are what the scheduler is built from.
type SchedulerDeps struct {
	fennec.In
	Service *Service
	// Pool is the executor plugins' pool; Executors, when given, replaces
	// it (an embedder's own executors, or a test's).
	Pool      *executors.Pool `optional:"true"`
	Executors cicd.Executors  `optional:"true"`
	// Node marks the jobs this process's executors run (nil: an app
	// without the core's node, whose jobs a restart fails).
	Node *fennec.Node `optional:"true"`
}

// Scheduler runs the CI loops with the app (settling pipelines, starting
// jobs on executors, reaping, watching runners, running due pipeline
// schedules) and stops them before the
// bus and the store: jobs it was following are failed at the next start
// (recoverRunning), as a crash would leave them. Without executors it
// still runs: runners take the jobs.
type Scheduler struct {
	s  *Service
	sc *scheduler
}

// NewScheduler builds the scheduler and attaches it to the service.
func NewScheduler(d SchedulerDeps) *Scheduler {
	s := d.Service
	exec := d.Executors
	if exec == nil && d.Pool != nil {
		exec = PoolExecutors{Pool: d.Pool}
	}
	if exec == nil {
		s.log.Info("no job executors: CI jobs wait for GitLab Runners")
	}
	sc := &scheduler{s: s, exec: exec, running: map[int64]*runningJob{}}
	s.sched = sc
	s.node = d.Node
	if d.Node != nil && d.Node.Shared() {
		// A job made pending on another node wakes this node's
		// dispatcher (its waiting runners, its executors) at once.
		s.db.OnSignal(pendingSignal, func([]byte) {
			s.runnerQueue.bump()
			s.wakeScheduler()
		})
		// Trace appends are file writes, which another node's waiters
		// cannot hear: a live log's request waits a second at most, so
		// the page sees another node's lines within about that.
		s.traceWaits.limit = sharedTraceWait
		// Cut off from the store, this node is about to be taken for
		// dead: its executor jobs are failed then, and may be retried on
		// another node. Stopping them first keeps a job from running on
		// two nodes at once.
		d.Node.OnCutOff(sc.stopAll)
	}
	s.decideWake = make(chan struct{}, 1)
	s.stopWake = make(chan struct{}, 1)
	s.delayWake = make(chan struct{}, 1)
	return &Scheduler{s: s, sc: sc}
}

// sharedTraceWait is how long a trace.json request waits on a shared store.
const sharedTraceWait = time.Second

// NewDispatcher is the part of the scheduler that hands pending jobs to
// this node's executors and to the runners waiting on this node.
func NewDispatcher(x *Scheduler) *Dispatcher { return &Dispatcher{sc: x.sc} }

// Dispatcher runs the dispatch loop on every node of several sharing a
// store: each hands pending jobs to the executors and runners it has, and
// the transaction that starts a job takes it only while it is still
// pending, so a job goes to exactly one of them.
type Dispatcher struct{ sc *scheduler }

var (
	_ fennec.Runner    = (*Dispatcher)(nil)
	_ fennec.EveryNode = (*Dispatcher)(nil)
)

// EveryNode implements fennec.EveryNode.
func (d *Dispatcher) EveryNode() {}

// Run dispatches until ctx ends, then waits for the jobs it started. The
// loop counts in the wait group itself, so the jobs it starts are added
// while the count is above zero and the Wait covers all of them.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.sc.wg.Add(1)
	go func() { defer d.sc.wg.Done(); d.sc.loop(ctx) }()
	<-ctx.Done()
	d.sc.wg.Wait()
	return nil
}

var (
	_ fennec.Provisioner = (*Scheduler)(nil)
	_ fennec.Runner      = (*Scheduler)(nil)
)

// Provision fails the jobs a stopped server was following.
func (x *Scheduler) Provision(ctx context.Context) error { return x.s.recoverRunning(ctx) }

// Run runs the leader's loops until ctx ends and waits for them. Jobs are
// started by the Dispatcher, which waits for them.
func (x *Scheduler) Run(ctx context.Context) error {
	s := x.s
	var loops sync.WaitGroup
	loops.Add(8)
	go func() { defer loops.Done(); s.settleLoop(ctx) }()
	go func() { defer loops.Done(); s.deadNodesLoop(ctx) }()
	go func() { defer loops.Done(); s.reapLoop(ctx) }()
	go func() { defer loops.Done(); s.watchRunners(ctx) }()
	go func() { defer loops.Done(); s.scheduleLoop(ctx) }()
	go func() { defer loops.Done(); s.bridgeLoop(ctx) }()
	go func() { defer loops.Done(); s.environmentStopLoop(ctx) }()
	go func() { defer loops.Done(); s.scheduledJobsLoop(ctx) }()
	<-ctx.Done()
	loops.Wait()
	return nil
}
