package web

import (
	"context"
	"html/template"
)

// CI statuses are shown on pages of several modules: CI's own, and the
// commit page and branch list of the repository module, which sits below
// CI and cannot ask it. The icon is one partial of the layout ("ci-status",
// templates/base/cistatus.html), and the lower modules ask the site for a
// commit's status (CommitStatus), which CI answers when it is loaded.

// CIStatus is a pipeline's or a job's status as a page shows it: an icon
// in the status's colour and its word, linking to Href when set.
type CIStatus struct {
	// Status is the stored status: success, failed, running, pending,
	// canceled, skipped, created, manual, waiting_for_resource.
	Status string
	// Href is where the icon links, prefixed already; "" for no link.
	Href string
	// IconOnly shows the word to screen readers only (and as a tooltip,
	// with Title before it): the small icons of a pipeline's stages.
	IconOnly bool
	Title    string
}

// ciLabels are the words GitLab shows for the statuses.
var ciLabels = map[string]string{
	"success": "passed", "failed": "failed", "running": "running", "pending": "pending",
	"canceled": "canceled", "skipped": "skipped", "created": "created", "manual": "manual",
	"waiting_for_resource": "waiting", "scheduled": "delayed", "preparing": "preparing",
}

// Label is the status's word ("passed" for success); "unknown" for a
// status this version does not know.
func (c CIStatus) Label() string {
	if l, ok := ciLabels[c.Status]; ok {
		return l
	}
	return "unknown"
}

// Class is the CSS class of the status's colour and icon: a known
// status's name, never text from elsewhere.
func (c CIStatus) Class() string {
	if _, ok := ciLabels[c.Status]; ok {
		return "ci-" + c.Status
	}
	return "ci-unknown"
}

// ciGlyphs are the marks inside the icon's circle, one SVG path each
// (stroked in the status's colour).
var ciGlyphs = map[string]string{
	"success":              "M4.8 8.3l2.2 2.2 4.3-4.6",
	"failed":               "M5.5 5.5l5 5M10.5 5.5l-5 5",
	"running":              "M8 3.5a4.5 4.5 0 0 1 0 9z",
	"pending":              "M6.3 5.5v5M9.7 5.5v5",
	"canceled":             "M5 11L11 5",
	"skipped":              "M5 5.5l3 2.5-3 2.5M8.5 5.5l3 2.5-3 2.5",
	"created":              "M8 7.2v1.6",
	"manual":               "M6.5 5.2l4 2.8-4 2.8z",
	"waiting_for_resource": "M6.3 5.5v5M9.7 5.5v5",
	"scheduled":            "M8 5v3.2l2 1.3",
	"preparing":            "M8 7.2v1.6",
}

// Icon is the status's icon, an inline SVG hidden from screen readers
// (the word beside it is read).
func (c CIStatus) Icon() template.HTML {
	glyph := ciGlyphs[c.Status]
	if glyph == "" {
		glyph = "M6.6 6.4a1.5 1.5 0 1 1 1.4 2v1M8 11v.2"
	}
	return template.HTML(`<svg class="ci-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">` +
		`<circle cx="8" cy="8" r="6.8"/><path d="` + glyph + `"/></svg>`)
}

// CommitStatusFunc answers the status of the newest pipeline of a
// project's commit as the visitor in ctx may see it: ok is false when the
// commit has none, or the visitor may not see the project's pipelines.
// It is asked once per commit a page shows, so it must be a bounded
// lookup.
type CommitStatusFunc func(ctx context.Context, projectID int64, sha string) (status CIStatus, ok bool)

// SetCommitStatus makes f the answer of CommitStatus (the CI module's
// pages register it).
func (s *Site) SetCommitStatus(f CommitStatusFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commitStatus = f
}

// CommitStatus is the status of a commit's newest pipeline, linking to
// it, for pages of modules that cannot ask CI (the repository's); ok is
// false without one, or without a CI module.
func (s *Site) CommitStatus(ctx context.Context, projectID int64, sha string) (CIStatus, bool) {
	s.mu.RLock()
	f := s.commitStatus
	s.mu.RUnlock()
	if f == nil || sha == "" {
		return CIStatus{}, false
	}
	return f(ctx, projectID, sha)
}

// MergeRequestLink is a merge request as a page of another module links
// it: "!3" (or "group/project!3" in another project), its title, and its
// page, prefixed already.
type MergeRequestLink struct {
	Label, Title, Href string
}

// BranchMergeRequestsFunc answers the open merge requests whose source is
// a project's branch, as the visitor in ctx may see them (at most a few).
type BranchMergeRequestsFunc func(ctx context.Context, projectID int64, branch string) []MergeRequestLink

// SetBranchMergeRequests makes f the answer of BranchMergeRequests (the
// merge requests module's pages register it).
func (s *Site) SetBranchMergeRequests(f BranchMergeRequestsFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.branchMRs = f
}

// BranchMergeRequests are the open merge requests from a project's
// branch, for pages of modules below merge requests (a branch pipeline's
// page in CI names the merge request it tests); none without the merge
// requests module.
func (s *Site) BranchMergeRequests(ctx context.Context, projectID int64, branch string) []MergeRequestLink {
	s.mu.RLock()
	f := s.branchMRs
	s.mu.RUnlock()
	if f == nil || branch == "" {
		return nil
	}
	return f(ctx, projectID, branch)
}
