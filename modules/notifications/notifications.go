package notifications

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/notifications/internal"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
)

// Config is the module's section of the configuration ("notifications":
// smtp_address, smtp_from, smtp_user, smtp_password, smtp_tls,
// smtp_reply_to, smtp_timeout, retry_initial, retry_max), for hosts and
// tests that set it with config.Modify; defined by the contract
// (notification.Config).
type Config = notification.Config

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config { return notification.DefaultConfig() }

// SectionName is the name of the module's configuration section.
const SectionName = "notifications"

// Module is the notifications module for fennec.WithModules. It provides
// notification.Service, the contract every caller of the settings (the
// HTTP adapter included) goes through.
func Module() fennec.Module {
	return fennec.NewModule("notifications",
		fennec.ModuleConfig(SectionName, notification.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(internal.NewService, internal.NewMailSender, func(s *internal.Service) notification.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideBackupParticipants(internal.BackupParticipants, internal.BackupSpec),
	)
}
