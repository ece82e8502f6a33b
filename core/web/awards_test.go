package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestNewAwards: the votes first (a target's even when nobody voted), the
// offered emoji in their order, then the others by name; who gave each (at
// most ten names), the visitor's own, and what the visitor may toggle.
func TestNewAwards(t *testing.T) {
	name := func(id int64) string { return fmt.Sprintf("U%d", id) }
	given := []Given{{1, "zzz", 2}, {2, "tada", 2}, {3, "thumbsdown", 3}, {4, "tada", 7}, {5, "aaa", 7}}
	show := func(a *Awards) string {
		if a == nil {
			return "nil"
		}
		var out []string
		for _, b := range a.Shown {
			out = append(out, fmt.Sprintf("%s:%d:%s:%v:%v", b.Name, b.Count, b.Who, b.Mine, b.Offer))
		}
		out = append(out, "|")
		for _, b := range a.More {
			out = append(out, b.Name)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		what  string
		given []Given
		me    int64
		form  Awards
		want  string
	}{
		{"anonymous, a target", given, 0, Awards{},
			"thumbsup:0::false:false thumbsdown:1:U3:false:false tada:2:U2, U7:false:false aaa:1:U7:false:false zzz:1:U2:false:false |"},
		{"anonymous, a note without awards", nil, 0, Awards{NoteID: "4"}, "nil"},
		{"a visitor who gave two", given, 7, Awards{Action: "/x"},
			"thumbsup:0::false:true thumbsdown:1:U3:false:true tada:2:U2, U7:true:true aaa:1:U7:true:true zzz:1:U2:false:false | smile confused heart rocket eyes"},
		{"the author, offered no vote", given, 3, Awards{Action: "/x", Authored: true},
			"thumbsup:0::false:false thumbsdown:1:U3:true:false tada:2:U2, U7:false:true aaa:1:U7:false:false zzz:1:U2:false:false | smile confused heart rocket eyes"},
		{"a note's, nothing given", nil, 7, Awards{Action: "/x", NoteID: "4"},
			"| thumbsup thumbsdown smile tada"},
	} {
		if got := show(NewAwards(c.given, c.me, name, c.form)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.what, got, c.want)
		}
	}
	var many []Given
	for i := range 12 {
		many = append(many, Given{int64(i + 1), "heart", int64(i + 1)})
	}
	if got := NewAwards(many, 0, name, Awards{}).Shown[2].Who; got != "U1, U2, U3, U4, U5, U6, U7, U8, U9, U10 and 2 others" {
		t.Errorf("twelve givers: %q", got)
	}
}

// TestToggleAward: the visitor's own award is taken back whatever its
// name; an offered one is given; any other name and a malformed note are
// refused before anything changes.
func TestToggleAward(t *testing.T) {
	var log []string
	calls := AwardCalls{
		List: func(_ context.Context, note *string) ([]Given, error) {
			if note != nil {
				return nil, nil
			}
			return []Given{{7, "heart_eyes", 1}, {8, "tada", 2}}, nil
		},
		Add: func(_ context.Context, note *string, name string) error {
			log = append(log, fmt.Sprintf("add %s on %v", name, note != nil))
			return nil
		},
		Remove: func(_ context.Context, _ *string, id string) error { log = append(log, "remove "+id); return nil },
	}
	for _, c := range []struct {
		me          int64
		note, name  string
		anchor, did string
		err         error
	}{
		{1, "", "heart_eyes", "#awards", "remove 7", nil},
		{1, "", "tada", "#awards", "add tada on false", nil},
		{1, "12", "rocket", "#note_12", "add rocket on true", nil},
		{2, "", "heart_eyes", "", "", ErrNotOffered},
		{1, "", "<b>", "", "", ErrNotOffered},
		{1, "", "", "", "", ErrNotOffered},
		{1, "-1", "tada", "", "", ErrBadNote},
		{1, "1/2", "tada", "", "", ErrBadNote},
	} {
		log = nil
		anchor, err := ToggleAward(context.Background(), calls, c.me, c.note, c.name)
		if anchor != c.anchor || !errors.Is(err, c.err) || strings.Join(log, ";") != c.did {
			t.Errorf("%d %q %q: %q %v %q", c.me, c.note, c.name, anchor, err, log)
		}
	}
}
