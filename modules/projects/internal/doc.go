// Package internal implements the projects module: its tables (store.go),
// the access rules (access.go), and the service, which implements package
// project's contracts (Access, Teams, Service, ...) and knows no HTTP. The
// HTTP adapter is the files named http*.go: the routes decode GitLab's
// parameters, call the service, render GitLab's views (httpviews.go) and
// leave the service's errors to the mapErrors table (http.go). Only
// modules/projects may import it.
package internal
