// Package fennec is the front door of the Fennec library core.
//
// An embedder builds an App from options and modules:
//
//	app, err := fennec.New(
//		fennec.WithConfig(cfg),
//		fennec.WithModules(identity.Module()),
//		fennec.WithLogger(logger),
//	)
//
// and either lets it listen (Run, or Start/Stop) or mounts App.Handler() in
// its own server. fx assembles the application behind this door; embedders
// never need to touch it. Module authors use the helpers in module.go to add
// routes, tables, migrations, event subscribers and auth resolvers,
// moduleconfig.go for their settings section, command.go for their admin
// commands and backupspec.go for their share of backups (backup.go writes the
// archive, restore.go reads it back).
//
// This package and everything under core/ know no domain: they must not
// import anything under modules/.
package fennec
