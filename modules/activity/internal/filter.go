package internal

import (
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// EventFilter is GitLab's filter of the event lists (GET /events,
// /users/:id/events and /projects/:id/events): an action, a target type,
// a window of dates and the order.
type EventFilter struct {
	Action     string `query:"action" enum:"created,updated,closed,reopened,pushed,commented,merged,joined,left,destroyed,expired," doc:"Only events of this action"`
	TargetType string `query:"target_type" enum:"issue,milestone,merge_request,note,project,snippet,user," doc:"Only events on this kind of target"`
	Before     string `query:"before" doc:"Only events created before this date (YYYY-MM-DD)"`
	After      string `query:"after" doc:"Only events created after this date (YYYY-MM-DD)"`
	Sort       string `query:"sort" enum:"asc,desc," doc:"Order by creation: desc (default) or asc"`
}

// actionNames are the stored action names that each filter value stands
// for: GitLab files an issue's "opened" under created, and a push's
// three names under pushed.
var actionNames = map[string][]feed.Action{
	"created":   {feed.Created, feed.Opened},
	"updated":   {feed.Updated},
	"closed":    {feed.Closed},
	"reopened":  {feed.Reopened},
	"pushed":    {feed.PushedTo, feed.PushedNew, feed.Deleted},
	"commented": {feed.CommentedOn},
	"merged":    {feed.Merged},
	"joined":    {feed.Joined},
	"left":      {feed.Left},
	"destroyed": {feed.Destroyed},
	"expired":   {feed.Expired},
}

// dates reads before and after; a malformed one is 400 "<name> is invalid",
// as GitLab's Date parameters answer.
func (f *EventFilter) dates() (before, after time.Time, err error) {
	parse := func(name, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return time.Time{}, api.Invalid(name)
		}
		return t, nil
	}
	if before, err = parse("before", f.Before); err != nil {
		return
	}
	after, err = parse("after", f.After)
	return
}

// active tells whether the filter keeps less than everything, so that the
// entries must be read to decide.
func (f *EventFilter) active() bool {
	return f.Action != "" || f.TargetType != "" || f.Before != "" || f.After != ""
}

// apply keeps the ids (newest first) of the entries the filter keeps, in
// the order asked for. Only an active filter reads the entries.
func (f *EventFilter) apply(tx *store.Tx, ids []uint64) ([]uint64, error) {
	if f.active() {
		before, after, err := f.dates()
		if err != nil {
			return nil, err
		}
		kept := ids[:0:0]
		for _, id := range ids {
			e, err := entries.Get(tx, id)
			if err != nil {
				continue // removed since the ids were read
			}
			if f.keeps(e, before, after) {
				kept = append(kept, id)
			}
		}
		ids = kept
	}
	if f.Sort == "asc" {
		rev := make([]uint64, len(ids))
		for i, id := range ids {
			rev[len(ids)-1-i] = id
		}
		ids = rev
	}
	return ids, nil
}

func (f *EventFilter) keeps(e *Entry, before, after time.Time) bool {
	if f.Action != "" {
		found := false
		for _, a := range actionNames[f.Action] {
			found = found || string(a) == e.ActionName
		}
		if !found {
			return false
		}
	}
	if f.TargetType != "" && snakeCase(e.TargetType) != f.TargetType {
		return false
	}
	if !before.IsZero() && !e.CreatedAt.Before(before) {
		return false
	}
	// after a date: from the end of that day, as GitLab compares the
	// timestamp with the date's midnight and a date names a whole day.
	if !after.IsZero() && e.CreatedAt.Before(after.Add(24*time.Hour)) {
		return false
	}
	return true
}

// snakeCase turns a stored target type (MergeRequest, DiffNote) into the
// filter's spelling (merge_request); a note of any kind is a note.
func snakeCase(t string) string {
	if strings.HasSuffix(t, "Note") {
		return "note"
	}
	var b strings.Builder
	for i, r := range t {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
