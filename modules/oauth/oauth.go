package oauth

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/oauth/internal"
)

// Clock tells the module the time. The module uses the wall clock unless
// the app provides one (tests move past token lifetimes with it):
//
//	fx.Supply(fx.Annotate(myClock, fx.As(new(oauth.Clock))))
type Clock = internal.Clock

// Sweeper deletes what can no longer matter: expired codes and sessions,
// tokens revoked over an hour ago. It runs hourly; embedders and tests may
// call it.
type Sweeper interface {
	Sweep(ctx context.Context) (removed int, err error)
}

// Lifetimes of what the module issues.
const (
	AccessTokenLifetime = internal.AccessTokenLifetime
	CodeLifetime        = internal.CodeLifetime
	SessionLifetime     = internal.SessionLifetime
)

// Module is the OAuth module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("oauth",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(internal.NewService, func(s *internal.Service) Sweeper { return s }),
		fx.Invoke(internal.ScheduleSweep),
		fennec.ProvideTokenResolver(func(s *internal.Service) *internal.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
	)
}
