// Package projects owns namespaces and groups, projects, memberships and
// access levels, stars, forks, shares, uploads and project hooks. Its Access
// service is the one place every other module asks "may this caller do X on
// project P", by :id or project id, for a request's caller or for
// background work (auth.System, auth.ForUser). SSHEndpoint is where the
// module serving git over SSH says where it is reached, for the
// ssh_url_to_repo the module renders. open_issues_count comes from the
// OpenIssuesCounter the module owning issues registers
// (ProvideOpenIssuesCounter), so this module never imports it.
//
// Its public packages are the contracts other modules build on: project
// (Access, the Service of commands on projects, groups and members, the
// records and errors they return), event (the ProjectEvent and MemberEvent
// it publishes) and feed (the activity feed entries and feed kinds every
// module above publishes and registers). The names of this package are
// aliases of package project's, kept for the modules that use them. It
// imports identity's public package and core only.
package projects
