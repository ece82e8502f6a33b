package internal

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClosingRefs(t *testing.T) {
	r := func(p string, n int64) IssueRef { return IssueRef{Project: p, IID: n} }
	cases := []struct {
		text string
		want []IssueRef
	}{
		{"Closes #12", []IssueRef{r("", 12)}},
		{"fixes #1, #2 and #3", []IssueRef{r("", 1), r("", 2), r("", 3)}},
		{"RESOLVED: #4", []IssueRef{r("", 4)}},
		{"closing issue #5", []IssueRef{r("", 5)}},
		{"Fix issues #6 and group/sub/proj#7", []IssueRef{r("", 6), r("group/sub/proj", 7)}},
		{"this resolves other#8", []IssueRef{r("other", 8)}},
		{"close #9\n\nalso fixed #9 and fixing #10", []IssueRef{r("", 9), r("", 10)}},
		{"Closes#11", nil},   // a space is required
		{"prefixes #1", nil}, // not a word of its own
		{"see #3, closes nothing", nil},
		{"Closes #0", nil},
		{"clos #1 fixe #2 resolv #3", nil},
		{"Closed #1,#2", []IssueRef{r("", 1), r("", 2)}},
		{"Closes group/proj#12.", []IssueRef{r("group/proj", 12)}},
	}
	for _, c := range cases {
		if got := ClosingRefs(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ClosingRefs(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestMentionedRefs(t *testing.T) {
	got := MentionedRefs("see #1 and a/b#2, not &#39; nor x#y, again #1")
	want := []IssueRef{{IID: 1}, {Project: "a/b", IID: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestClosingRefsBounded(t *testing.T) {
	text := "Closes " + strings.Repeat("#1, ", 10) + strings.Repeat("#9999 and ", 5)
	for i := 0; i < 500; i++ {
		text += " fixes #" + strconv.Itoa(i+1)
	}
	if got := ClosingRefs(text); len(got) != maxRefsPerText {
		t.Fatalf("%d refs, want the cap %d", len(got), maxRefsPerText)
	}
}

func FuzzClosingRefs(f *testing.F) {
	for _, s := range []string{"Closes #1", "fixes #1, #2 and g/p#3", "resolving: issue #4", "\xff#1", "#" + strings.Repeat("9", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		refs := ClosingRefs(text)
		if len(refs) > maxRefsPerText {
			t.Fatalf("%d refs", len(refs))
		}
		seen := map[IssueRef]bool{}
		for _, r := range refs {
			if r.IID <= 0 || seen[r] {
				t.Fatalf("bad or repeated ref %+v in %q", r, text)
			}
			seen[r] = true
			if !utf8.ValidString(r.Project) {
				t.Fatalf("project %q", r.Project)
			}
			// Every closing ref is also a mention.
			found := false
			for _, m := range MentionedRefs(text) {
				found = found || m == r
			}
			if !found && len(MentionedRefs(text)) < maxRefsPerText {
				t.Fatalf("closing ref %+v of %q is no mention", r, text)
			}
		}
	})
}
