package fennec

// The registrations a module makes, typed. Modules import this package,
// never go.uber.org/fx: fx assembles the app behind these names, and a
// module author learns only Provide, the Provide* of each kind of
// registration, In for a constructor with many parameters, and Extension
// for a set of values other modules add to.

import (
	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// Part is one piece of a module, as NewModule takes them: made by Provide,
// Tables, Migrations, ModuleConfig, the Provide* functions and Contribute.
type Part = fx.Option

// In marks a struct of a constructor's parameters (embed it): each field is
// a value of the app; a field tagged `optional:"true"` is its zero value
// when no loaded module provides it.
type In = fx.In

// None is the parameter of a registration's constructor that needs
// nothing: func(fennec.None) []events.Subscriber.
type None struct{ In }

// ProvideRoutes adds a constructor of the module's Routes; its parameter
// is a value of the app (a service) or an In struct of several.
func ProvideRoutes[D any](ctor func(D) Routes) Part {
	return withNeeds(fx.Provide(fx.Annotate(ctor, fx.ResultTags(groupRoutes))), ctor)
}

// ProvidePages adds a constructor of the module's Pages (its web
// interface); its parameter is as ProvideRoutes's.
func ProvidePages[D any](ctor func(D) Pages) Part {
	return withNeeds(fx.Provide(fx.Annotate(ctor, fx.ResultTags(groupPages))), ctor)
}

// ProvideSubscribers adds a constructor of event subscribers.
func ProvideSubscribers[D any](ctor func(D) []events.Subscriber) Part {
	return withNeeds(fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"fennec.subscribers,flatten"`))), ctor)
}

// ProvideMigrations adds a constructor of []store.Migration, for
// migrations that need a service (the sealing key, the configuration). A
// module's migrations must still number 1..n without gaps across all of its
// Migrations and ProvideMigrations.
func ProvideMigrations[D any](ctor func(D) []store.Migration) Part {
	return withNeeds(fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"fennec.migrations,flatten"`))), ctor)
}

// ProvideTokenResolver adds a constructor of an auth.TokenResolver.
func ProvideTokenResolver[D any, R auth.TokenResolver](ctor func(D) R) Part {
	return withNeeds(fx.Provide(fx.Annotate(ctor, fx.As(new(auth.TokenResolver)), fx.ResultTags(groupTokens))), ctor)
}

// Extension is a set of values of type T that any module may add to
// (Contribute) and one module reads once the app is assembled (Use): the
// collab module's target kinds, the projects module's branch checkers. The
// module that reads it defines it; the others import only that definition.
type Extension[T any] struct{ group string }

// NewExtension names an extension; the name is unique in the app.
func NewExtension[T any](name string) Extension[T] { return Extension[T]{group: name} }

// Contribute adds the values ctor builds to the extension.
func Contribute[T, D any](e Extension[T], ctor func(D) []T) Part {
	return withNeeds(fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+e.group+`,flatten"`))), ctor)
}

// Use hands every value contributed to the extension, by every loaded
// module, to set, with the reader's own value (its service), once the app
// is assembled and before it starts.
func Use[T, S any](e Extension[T], set func(S, []T)) Part {
	return withNeeds(fx.Invoke(fx.Annotate(set, fx.ParamTags("", `group:"`+e.group+`"`))), func(S) {})
}

// Supply provides v as a value of type T (an interface a module asks for):
// fennec.Supply[identity.Clock](clock) in a test, or an embedder's own
// implementation of a contract.
func Supply[T any](v T) Part {
	return fx.Provide(func() T { return v })
}

// Invoke calls fn with one of the app's values (or an In struct of
// several) while the app is assembled, before it starts: for wiring that
// no constructor owns, such as a test's hook into a service.
func Invoke[D any](fn func(D)) Part {
	return withNeeds(fx.Invoke(fn), fn)
}
