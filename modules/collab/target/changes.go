package target

import (
	"context"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
)

// What the owners of targets (issues, merge requests) write alike when a
// target changes: the system notes of a field change, the assigned todos,
// and the page of a list.

// DescriptionNote is the system note of a changed description.
const DescriptionNote = "changed the description"

// TitleNote is the system note of a changed title.
func TitleNote(before, after string) string {
	return "changed title from **" + before + "** to **" + after + "**"
}

// MilestoneRef is how a system note names a milestone: %"v1.0" (GitLab
// quotes the title, which loses its own quotes).
func MilestoneRef(title string) string { return `%"` + strings.ReplaceAll(title, `"`, "") + `"` }

// MilestoneNote is the system note of a changed milestone: ref names the
// new one (MilestoneRef), "" when it was removed.
func MilestoneNote(ref string) string {
	if ref == "" {
		return "removed milestone"
	}
	return "changed milestone to " + ref
}

// AssignedTodos gives each of users an Assigned todo on t (titled title),
// by author (none without users).
func AssignedTodos(ctx context.Context, s Service, t Target, title string, author int64, users []int64) error {
	if len(users) == 0 {
		return nil
	}
	list := make([]NewTodo, 0, len(users))
	for _, u := range users {
		list = append(list, NewTodo{UserID: u, AuthorID: author, Target: t, Action: Assigned, Body: title})
	}
	return s.AddTodos(ctx, list...)
}

// Window is the page p of list (an empty one past its end).
func Window[T any](list []T, p Page) []T {
	return store.Window(list, p.Offset, p.Limit)
}

// Tallies are the tallies (Service.Tallies) of a page of targets of kind
// typ named by ids, read with ctx: none without the collab module (s nil)
// or without ids.
func Tallies(ctx context.Context, s Service, typ string, ids []int64) (map[int64]Tally, error) {
	if s == nil || len(ids) == 0 {
		return nil, nil
	}
	return s.Tallies(ctx, typ, ids)
}

// SameLabels says whether two lists of label ids hold the same labels, in
// any order (whether a change of a target's labels changes them).
func SameLabels[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
