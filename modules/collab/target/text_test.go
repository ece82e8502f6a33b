package target

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// The feed entry of a change keeps the keys the issues and merge requests
// modules gave theirs: a redelivery of the same change is dropped, a
// second close is a second entry.
func TestFeedEntry(t *testing.T) {
	at := time.Unix(0, 1234)
	tg := Target{Type: "Issue", ID: 7, ProjectID: 3}
	for _, c := range []struct {
		action, key string
		shown       bool
	}{
		{"open", "issues.opened:7", true},
		{"close", "issues.closed:7:1234", true},
		{"reopen", "issues.reopened:7:1234", true},
		{"merge", "issues.merged:7", true},
		{"update", "", false},
	} {
		ev, ok := FeedEntry("issues", tg, 2, "Fix it", 5, c.action, at)
		if ok != c.shown || ev.Key != c.key {
			t.Errorf("%s: %v %q", c.action, ok, ev.Key)
		}
		if ok && (ev.ProjectID != 3 || ev.AuthorID != 5 || ev.TargetID != 7 || ev.TargetType != "Issue" || ev.TargetTitle != "Fix it" || ev.TargetIID != 2) {
			t.Errorf("%s: %+v", c.action, ev)
		}
	}
	if ev, _ := FeedEntry("mergerequests", tg, 2, "", 5, "merge", at); ev.ActionName != feed.Merged {
		t.Errorf("merge: %+v", ev)
	}
	if _, ok := FeedEntry("issues", tg, 2, "", 0, "open", at); ok {
		t.Error("a change by no user has an entry")
	}
}

func TestTextRules(t *testing.T) {
	var inv *InvalidError
	for _, c := range []struct {
		err   error
		field string
		text  string
	}{
		{CheckTitle(""), "title", "can't be blank"},
		{CheckTitle("a\x00b"), "title", "is invalid"},
		{CheckTitle("a\xffb"), "title", "is invalid"},
		{CheckTitle(strings.Repeat("é", 256)), "title", "is too long (maximum is 255 characters)"},
		{CheckDescription(strings.Repeat("a", MaxDescription+1)), "description", "is too long (maximum is 1000000 characters)"},
		{CheckDescription("\ufffd"), "description", "is invalid"},
	} {
		if !errors.As(c.err, &inv) || !errors.Is(c.err, ErrInvalid) || inv.Field != c.field || inv.Text != c.text ||
			inv.Fields()[c.field][0] != c.text {
			t.Errorf("%v, want %s %s", c.err, c.field, c.text)
		}
	}
	if CheckTitle(strings.Repeat("é", 255)) != nil || CheckDescription("line\nline") != nil {
		t.Error("valid text refused")
	}
	if got := LabelNote([]int64{1, 3}, []int64{1, 2, 4}); got != "added ~2 ~4 labels and removed ~3 label" {
		t.Errorf("label note %q", got)
	}
	if got := LabelNote(nil, []int64{9}); got != "added ~9 label" {
		t.Errorf("label note %q", got)
	}
}
