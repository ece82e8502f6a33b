package internal

import (
	"context"
	"time"

	fennec "github.com/fennec-forge/fennec/core"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/netguard"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/project"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

// purposeSystemHookToken is what system hook tokens are sealed for.
const purposeSystemHookToken = "webhooks.system_hook.token"

// Deps are what the service is built from.
type Deps struct {
	fennec.In
	DB     *store.DB
	Bus    *events.Bus
	Log    *zap.Logger
	URL    fennec.ExternalURL
	Box    *sealed.Box
	Config config.Config
	Set    webhook.Config
	Access projects.Access
	Hooks  projects.Hooks
	// Projects changes project hooks for the settings pages (the hooks
	// are the projects module's records).
	Projects project.Service
	Users    identity.Users
	Repos    gitread.Reader
}

// Service enqueues, sends and shows hook deliveries.
type Service struct {
	db     *store.DB
	bus    *events.Bus
	log    *zap.Logger
	url    fennec.ExternalURL
	box    *sealed.Box
	cfg    webhook.Config
	access projects.Access
	hooks  projects.Hooks
	proj   project.Service
	users  identity.Users
	repos  gitread.Reader
	guard  *netguard.Guard
	now    func() time.Time

	clients *hookClients // the outbound HTTP (httpclient.go)

	queue *workqueue.Queue // the deliveries (deliver.go)
}

// NewService builds the service.
func NewService(d Deps) *Service {
	s := &Service{
		db: d.DB, bus: d.Bus, log: d.Log.Named("webhooks"), url: d.URL, box: d.Box, cfg: d.Set,
		access: d.Access, hooks: d.Hooks, proj: d.Projects, users: d.Users, repos: d.Repos,
		guard: netguard.New(d.Config.AllowLocalRequests), now: time.Now,
	}
	s.clients = newHookClients(s.guard, s.cfg.Timeout)
	s.queue = workqueue.New(d.DB, deliveriesQueue, s.retry(), s.deliver,
		workqueue.WithMaxAttempts(s.cfg.MaxAttempts), workqueue.WithLogger(s.log),
		workqueue.WithLease(deliveryLease(s.cfg.Timeout)),
		workqueue.WithClock(func() time.Time { return s.now() }))
	return s
}

var _ fennec.Runner = (*Service)(nil)

// deliveryLease is how long a taken delivery stays the taker's unless
// renewed. Deliveries of one hook run in order, so on nodes sharing a store
// a delivery taken by a node that died holds up its hook's line until the
// lease ends. The queue renews the lease of a delivery in progress, so the
// lease need not cover the hook timeout: three timeouts, at most 15 s.
func deliveryLease(timeout time.Duration) time.Duration { return min(3*timeout, 15*time.Second) }

// EveryNode: with several nodes on one store, every node works the
// shared deliveries queue (core/workqueue leases each job to one of them).
func (s *Service) EveryNode() {}

// Run resumes the queues an earlier run left and prunes the delivery log
// until ctx ends; then it stops every hook's worker and waits for them (a
// delivery in flight finishes or is retried at the next start).
func (s *Service) Run(ctx context.Context) error {
	var keys []string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		keys = queuedHooks(tx)
		return nil
	})
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		s.log.Info("webhooks: resuming queued deliveries", zap.Int("hooks", len(keys)))
	}
	pruned := make(chan struct{})
	go func() { defer close(pruned); s.pruneLoop(ctx) }()
	if err := s.queue.Run(ctx); err != nil {
		s.log.Error("webhooks: the deliveries queue stopped", zap.Error(err))
	}
	<-pruned
	return nil
}
