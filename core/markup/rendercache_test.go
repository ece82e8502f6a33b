package markup

import (
	"context"
	"strings"
	"testing"
)

// visitor is a Resolver that lets its visitor see references to issue
// 12 or not, and counts the questions.
type visitor struct {
	seesTwelve bool
	asked      int
}

func (v *visitor) Reference(_ context.Context, r Reference) (bool, string) {
	v.asked++
	return v.seesTwelve && r.ID == "12", "Secret title"
}

// TestRenderCacheKeepsOnlyVisitorIndependentRenders: a comment without
// references is rendered once and then served from the cache, the same
// for all; a comment with references is rendered for each visitor (the
// one who may see #12 gets its link and title, the other plain text,
// whoever came first); a render without a Resolver is never served to a
// page with one.
func TestRenderCacheKeepsOnlyVisitorIndependentRenders(t *testing.T) {
	ctx := context.Background()
	c := Context{BaseURL: "http://h", Project: "g/cache-test"}
	plain := []byte("A **plain** comment, `code` and a [link](https://example.com) (cache test).")
	alice := &visitor{seesTwelve: true}
	c.Resolver = alice
	first := Render(ctx, plain, c)
	if _, ok := renders.get(renderKey(plain, c)); !ok {
		t.Fatal("a comment without references was not kept")
	}
	bob := &visitor{}
	c.Resolver = bob
	if again := Render(ctx, plain, c); again != first || alice.asked != 0 || bob.asked != 0 {
		t.Fatalf("plain comment: %q then %q, asked %d and %d", first, again, alice.asked, bob.asked)
	}
	// The same text in another project is another render.
	other := c
	other.Project = "g/other"
	if _, ok := renders.get(renderKey(plain, other)); ok {
		t.Fatal("a render was kept for a project it was not made in")
	}

	secret := []byte("Fixed by #12 (cache test).")
	for round, order := range [][]*visitor{{alice, bob}, {bob, alice}} {
		for _, v := range order {
			c.Resolver = v
			before := v.asked
			got := string(Render(ctx, secret, c))
			if v.asked != before+1 {
				t.Fatalf("round %d: the resolver was asked %d times, want once", round, v.asked-before)
			}
			linked := strings.Contains(got, `href="http://h/g/cache-test/-/issues/12"`) && strings.Contains(got, "Secret title")
			if linked != v.seesTwelve {
				t.Fatalf("round %d, visitor who sees #12 %v: %s", round, v.seesTwelve, got)
			}
		}
	}
	if _, ok := renders.get(renderKey(secret, c)); ok {
		t.Fatal("a comment with a reference was kept")
	}

	// Without a Resolver the reference is text, and kept as such; a page
	// with a Resolver still asks.
	noResolver := Context{BaseURL: "http://h", Project: "g/cache-test"}
	if got := string(Render(ctx, secret, noResolver)); strings.Contains(got, "<a ") {
		t.Fatalf("without a resolver: %s", got)
	}
	c.Resolver = alice
	before := alice.asked
	if got := string(Render(ctx, secret, c)); !strings.Contains(got, "Secret title") || alice.asked != before+1 {
		t.Fatalf("with a resolver after a render without one: %s (asked %d)", got, alice.asked-before)
	}
}
