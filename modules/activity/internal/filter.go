package internal

import (
	"fmt"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

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

// filter is the service's reading of an entry.Filter.
type filter entry.Filter

// dates reads before and after; a malformed one is a *entry.DateError
// (GitLab's Date parameters answer 400 "<name> is invalid").
func (f *filter) dates() (before, after time.Time, err error) {
	parse := func(name, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return time.Time{}, fmt.Errorf("activity: %w", &entry.DateError{Param: name})
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
func (f *filter) active() bool {
	return f.Action != "" || f.TargetType != "" || f.Before != "" || f.After != ""
}

// apply keeps the ids (newest first) of the entries the filter keeps, in
// the order asked for. Only an active filter reads the entries.
func (f *filter) apply(tx *store.Tx, ids []int64) ([]int64, error) {
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
	if f.Ascending {
		rev := make([]int64, len(ids))
		for i, id := range ids {
			rev[len(ids)-1-i] = id
		}
		ids = rev
	}
	return ids, nil
}

func (f *filter) keeps(e *Entry, before, after time.Time) bool {
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
