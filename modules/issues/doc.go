// Package issues is the issues module: a project's issues (GitLab 9.x's
// /projects/:id/issues and /issues, with per-project iids), labels and
// milestones, subscriptions and todos on issues, and the closing of issues
// by the commits that land on a project's default branch ("Fixes #12").
//
// It imports identity (users in views), projects (access, feeds),
// repository (push events) and collab, whose service it calls inside its
// own transactions: a system note, a mention's todo or an assignment's todo
// commits with the change that caused it. It registers issues with it as
// one target kind (target.Kind "Issue": notes, todos, the feeds'
// visibility), and publishes event.IssueEvent for the webhooks.
//
// For the merge requests module it provides the collab contract's seams
// target.Labels and target.Milestones (to attach them, and their label
// events) and target.Closer (closes_issues, the merge message); it closes
// the issues a merge names on the collab event Merged, which merge
// requests publish. Merge requests import nothing of this module.
//
// Its contract is the package issue (issue.Service, its inputs, records and
// errors), which Module provides; internal/ implements it, and its
// http*.go files are the HTTP adapter (ARCHITECTURE.md, "A module's
// anatomy").
package issues
