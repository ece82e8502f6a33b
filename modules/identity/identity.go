package identity

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/internal"
)

// UserDeleted is published (through the outbox) when an administrator
// deletes a user. The user's keys, e-mails and tokens are gone with it;
// modules owning other data of the user decide what happens to it.
type UserDeleted = internal.UserDeleted

// Activity records that a user was active today; the repository module calls
// it on git access over HTTP or SSH. It writes at most once per user and day.
type Activity interface {
	RecordActivity(ctx context.Context, userID int64) error
}

// Module is the identity module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("identity",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(
			internal.NewService,
			func(s *internal.Service) auth.PasswordAuthenticator { return s },
			func(s *internal.Service) auth.UserLookup { return s },
			func(s *internal.Service) auth.Provisioner { return s },
			func(s *internal.Service) Activity { return s },
		),
		fennec.ProvideTokenResolver(func(s *internal.Service) *internal.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fx.Invoke(internal.Bootstrap, internal.ScheduleSync),
	)
}
