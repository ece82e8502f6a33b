package notifications

import (
	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/notifications/internal"
)

// Config is the module's section of the configuration ("notifications":
// smtp_address, smtp_from, smtp_user, smtp_password, smtp_tls,
// smtp_reply_to, smtp_timeout, retry_initial, retry_max), for hosts and
// tests that set it with config.Modify.
type Config = internal.Config

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config { return internal.DefaultConfig() }

// SectionName is the name of the module's configuration section.
const SectionName = "notifications"

// Module is the notifications module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("notifications",
		fennec.ModuleConfig(SectionName, internal.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(internal.NewService),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
		fx.Invoke(internal.Start),
	)
}
