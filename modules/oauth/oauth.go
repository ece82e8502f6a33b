package oauth

import (
	"context"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/oauth/internal"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// Clock tells the module the time (provider.Clock). The module uses the
// wall clock unless the app provides one (tests move past token lifetimes
// with it):
//
//	fennec.Supply[oauth.Clock](myClock)
type Clock = provider.Clock

// Sweeper deletes what can no longer matter: expired codes and sessions,
// tokens revoked over an hour ago (provider.Service's Sweep). It runs
// hourly; embedders and tests may call it.
type Sweeper interface {
	Sweep(ctx context.Context) (removed int, err error)
}

// Lifetimes of what the module issues.
const (
	AccessTokenLifetime = provider.AccessTokenLifetime
	CodeLifetime        = provider.CodeLifetime
	SessionLifetime     = provider.SessionLifetime
)

// Module is the OAuth module for fennec.WithModules. It provides
// provider.Service, the contract every caller (the HTTP adapter included)
// goes through.
func Module() fennec.Module {
	return fennec.NewModule("oauth",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(internal.NewService,
			func(s *internal.Service) provider.Service { return s },
			func(s *internal.Service) Sweeper { return s }),
		fennec.ProvideTokenResolver(func(s *internal.Service) *internal.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideSubscribers(internal.Subscribers),
	)
}
