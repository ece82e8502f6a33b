package identity

import (
	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/internal"
)

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
		),
		fennec.ProvideTokenResolver(func(s *internal.Service) *internal.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fx.Invoke(internal.Bootstrap),
	)
}
