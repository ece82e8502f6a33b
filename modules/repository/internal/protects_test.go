package internal

import "testing"

// TestProtectsWildcards: a protection's name covers its own branch, and a
// "*" in it stands for any text, empty or with "/" in it, as GitLab's
// wildcard protected branches match.
func TestProtectsWildcards(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, branch string
		want            bool
	}{
		{"master", "master", true},
		{"master", "master2", false},
		{"master", "Master", false},
		{"release-*", "release-1", true},
		{"release-*", "release-", true},
		{"release-*", "release", false},
		{"release-*", "xrelease-1", false},
		{"release-*", "release-1/hotfix", true},
		{"*-stable", "9-0-stable", true},
		{"*-stable", "9-0-stable-x", false},
		{"*", "anything/at/all", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "a-b-b-c", true},
		{"a*b*c", "a-c-b", false},
		{"a*bc*bc", "abc", false},
		{"a*bc*bc", "abcbc", true},
		{"feature/*", "feature/x", true},
		{"feature/*", "feature", false},
		{"r.*", "rx1", false}, // only "*" is special
		{"r.*", "r.1", true},
	} {
		if got := protects(c.pattern, c.branch); got != c.want {
			t.Errorf("protects(%q, %q) = %v, want %v", c.pattern, c.branch, got, c.want)
		}
	}
}
