package web

import (
	"context"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/core/markup"
)

type commitsOnly struct{ asked int }

func (c *commitsOnly) Reference(_ context.Context, r markup.Reference) (bool, string) {
	c.asked++
	return r.Kind == markup.Commit, "from the page"
}

// TestResolverAsksOnceAndBounded: a page's resolver asks its own resolver
// first, then the module registered for the kind; it asks once per
// distinct reference, and no more than maxReferenceLookups times in all,
// whatever the text holds.
func TestResolverAsksOnceAndBounded(t *testing.T) {
	s := &Site{}
	if s.Resolver(nil) != nil {
		t.Fatal("a resolver with nobody to ask")
	}
	issues := 0
	s.AddReferences(markup.Issue, func(_ context.Context, r markup.Reference) (bool, string) {
		issues++
		return r.ID == "1", "issue " + r.ID
	})
	page := &commitsOnly{}
	res := s.Resolver(page)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if ok, title := res.Reference(ctx, markup.Reference{Kind: markup.Issue, Project: "g/p", ID: "1"}); !ok || title != "issue 1" {
			t.Fatalf("#1: %v %q", ok, title)
		}
	}
	if ok, title := res.Reference(ctx, markup.Reference{Kind: markup.Commit, Project: "g/p", ID: "abcdef1"}); !ok || title != "from the page" {
		t.Fatalf("commit: %v %q", ok, title)
	}
	if ok, _ := res.Reference(ctx, markup.Reference{Kind: markup.User, ID: "alice"}); ok {
		t.Fatal("a kind nobody registered was linked")
	}
	if issues != 1 || page.asked != 3 {
		t.Fatalf("asked the module %d times, the page %d; want 1 and 3", issues, page.asked)
	}
	for i := 2; i < 2*maxReferenceLookups; i++ {
		res.Reference(ctx, markup.Reference{Kind: markup.Issue, Project: "g/p", ID: strconv.Itoa(i)})
	}
	// Each distinct reference asks the page, then the module.
	// Three distinct ones (#1, the commit, @alice) were asked above.
	if issues != maxReferenceLookups-2 || page.asked != maxReferenceLookups {
		t.Fatalf("asked the module %d times, the page %d, for one page; bound %d", issues, page.asked, maxReferenceLookups)
	}
	// A new page starts afresh.
	if ok, _ := s.Resolver(nil).Reference(ctx, markup.Reference{Kind: markup.Issue, Project: "g/p", ID: "1"}); !ok {
		t.Fatal("a new page's resolver refused #1")
	}
}
