package fennec

import (
	"reflect"

	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
)

// Module is one domain's contribution to an App: its routes, tables,
// services and subscriptions. Modules build it with NewModule; embedders only
// pass it to WithModules.
type Module struct {
	name     string
	opt      fx.Option
	sections []config.Section
	commands []AdminCommandSpec
	backups  []BackupSpec
	needs    []reflect.Type // what its registrations take (needs.go)
}

// NewModule bundles a module's fx options under its name.
func NewModule(name string, opts ...Part) Module {
	m := Module{name: name, opt: fx.Module(name, opts...)}
	for _, o := range opts {
		switch o := o.(type) {
		case ConfigSection:
			m.sections = append(m.sections, o.section)
		case AdminCommands:
			m.commands = append(m.commands, o.specs...)
		case BackupParticipants:
			m.backups = append(m.backups, o.specs...)
		case needing:
			m.needs = append(m.needs, o.needs...)
		}
	}
	return m
}

// Name is the module's name.
func (m Module) Name() string { return m.name }

// ExternalURL is how clients reach the server (config external_url, else
// the address it listens on), for the links a service builds outside a
// request: the web_url of a record, an event's URLs, a mail's links, a
// hook's payload. It is read at each call, since the listening address is
// known only once the server listens. Every app provides it; a service
// takes it as a dependency and need not know HTTP. Within a request,
// api.ExternalURLFrom(ctx) is the request's.
type ExternalURL func() string

// Routes registers a module's operations on the shared API. Name orders
// registration (so the OpenAPI document is stable).
type Routes struct {
	Name     string
	Register func(*api.API)
}

// Pages registers a module's web pages, tabs and menu entries on the
// site (core/web). Name orders registration.
type Pages struct {
	Name     string
	Register func(*web.Site)
}

// Value groups: producers tag results with these (flattening slices), the
// core's wiring consumes them with the plain group name.
const (
	groupRoutes      = `group:"fennec.routes"`
	groupPages       = `group:"fennec.pages"`
	groupBuckets     = `group:"fennec.buckets"`
	groupMigrations  = `group:"fennec.migrations"`
	groupSubscribers = `group:"fennec.subscribers"`
	groupTokens      = `group:"fennec.tokens"`
)

// Tables declares the buckets of a module's tables (anything with Buckets()).
func Tables(tables ...interface{ Buckets() []string }) Part {
	var names []string
	for _, t := range tables {
		names = append(names, t.Buckets()...)
	}
	return fx.Provide(fx.Annotate(func() []string { return names }, fx.ResultTags(`group:"fennec.buckets,flatten"`)))
}

// Migrations declares a module's ordered schema migrations.
func Migrations(ms ...store.Migration) Part {
	return fx.Provide(fx.Annotate(func() []store.Migration { return ms }, fx.ResultTags(`group:"fennec.migrations,flatten"`)))
}
