// Package project is the public contract of the projects module: what
// every other module (and a page, an admin command or an embedder's Go
// code) may know and ask of projects, groups and memberships.
//
//   - Access, the one place a caller's rights on a project are decided,
//     with the Action table and the access levels; Info is a project as a
//     caller sees it, GroupInfo a group.
//   - Service, the commands on projects, groups, members and shares, with
//     their inputs (Fields, GroupFields, MemberFields, ForkFields,
//     ShareFields) and the records they return (Project, Group, Member,
//     Share).
//   - The registries and read surfaces other modules use (Teams,
//     RepositoryState, Hooks, RunnersTokens, SSHEndpoint,
//     OpenIssuesCounter, BranchChecker).
//   - The sentinel errors, which the module's HTTP adapter maps to GitLab's
//     answers; callers test them with errors.Is.
//
// The principal is the one in ctx (auth.FromContext): a request's, or
// auth.System() / auth.ForUser(u) for background work.
//
// It is defined here, not in the root package, because the root imports
// internal/ (Module()) and internal/ implements this: Go forbids the
// cycle. The root package keeps its old names as aliases of these. It
// imports core only (no HTTP).
package project
