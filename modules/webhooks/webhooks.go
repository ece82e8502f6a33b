package webhooks

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/webhooks/internal"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

// SectionName is the module's section of the configuration.
const SectionName = webhook.SectionName

// Config is the module's settings (delivery_log_retention, timeout,
// max_attempts, retry_backoff, max_backoff), for hosts and tests that set
// it with config.Modify; defined by the contract (webhook.Config).
type Config = webhook.Config

// Module is the webhooks module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("webhooks",
		fennec.ModuleConfig(SectionName, webhook.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(internal.NewService, func(s *internal.Service) webhook.Service { return s }),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
	)
}
