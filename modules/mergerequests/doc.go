// Package mergerequests is Fennec's merge requests: GitLab 9.x's
// /projects/:id/merge_requests endpoints, their states and transitions, the
// merge itself (made by the repository module's merge engine and landed by
// compare-and-set), merge when pipeline succeeds, and the notes, todos,
// feed entries and Merge Request Hook events they cause. The contract
// other modules and embedders use is package mergerequest (the Service,
// its records and errors), which Module provides; the published event's
// is package event. The work is in internal/.
package mergerequests
