package internal

import (
	"context"
	"net/url"
	"time"

	fennec "github.com/fennec-forge/fennec/core"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// Service keeps the settings, computes recipients, queues mails and runs
// the sender.
type Service struct {
	db     *store.DB
	log    *zap.Logger
	server fennec.ExternalURL // what mails link to
	access projects.Access
	teams  projects.Teams
	users  identity.Users
	emails identity.Emails
	resets identity.PasswordResets
	collab target.Service
	repos  gitread.Reader
	cfg    notification.Config
	blobs  blob.Store // holds the file outbox (used without SMTP)

	kick  chan struct{}
	now   func() time.Time
	mailq *workqueue.Queue // the mail queue (sender.go), worked by MailSender
}

// Params are the service's dependencies.
type Params struct {
	fennec.In
	DB     *store.DB
	Log    *zap.Logger
	URL    fennec.ExternalURL
	Access projects.Access
	Teams  projects.Teams
	Users  identity.Users
	Emails identity.Emails
	Resets identity.PasswordResets
	Collab target.Service
	Repos  gitread.Reader
	Cfg    notification.Config
	Blobs  blob.Store
}

// NewService builds the service.
func NewService(p Params) *Service {
	s := &Service{db: p.DB, log: p.Log, server: p.URL, access: p.Access, teams: p.Teams, users: p.Users, emails: p.Emails, resets: p.Resets,
		collab: p.Collab, repos: p.Repos, cfg: p.Cfg, blobs: p.Blobs,
		kick: make(chan struct{}, 1), now: time.Now}
	s.mailq = s.newQueue()
	return s
}

// MailSender works the mail queue. Apart from the Service, whose loop
// turns notices into queued mail on one node, it runs on every node of
// several sharing a store: the queue leases each mail to one of them, and
// a node's death delays only the mail it had in hand.
type MailSender struct{ s *Service }

// NewMailSender builds the mail queue's worker.
func NewMailSender(s *Service) *MailSender { return &MailSender{s: s} }

var (
	_ fennec.Runner    = (*MailSender)(nil)
	_ fennec.EveryNode = (*MailSender)(nil)
)

// EveryNode implements fennec.EveryNode.
func (*MailSender) EveryNode() {}

// Run sends queued mail until ctx ends.
func (m *MailSender) Run(ctx context.Context) error {
	if err := m.s.mailq.Run(ctx); err != nil {
		m.s.log.Error("notifications: the mail queue stopped", zap.Error(err))
	}
	return nil
}

// externalURL is how mails link to the server.
func (s *Service) externalURL() string { return s.server() }

// host names the server in Message-IDs and the default From.
func (s *Service) host() string {
	if u, err := url.Parse(s.externalURL()); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "localhost"
}

// Kick wakes the sender (after a commit that queued mail).
func (s *Service) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

var _ fennec.Runner = (*Service)(nil)

// Run sends the queued mail until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	if s.cfg.SMTPAddress == "" {
		s.log.Info("notifications: no smtp_address configured; mail is written to the file outbox",
			zap.String("outbox", outboxPrefix+" (under the data directory)"))
	} else {
		s.log.Info("notifications: mail goes to the SMTP server", zap.String("smtp_address", s.cfg.SMTPAddress),
			zap.String("smtp_tls", s.cfg.SMTPTLS))
	}
	s.expandLoop(ctx)
	return nil
}
