package internal

import "testing"

func TestWithoutWhitespaceChanges(t *testing.T) {
	cases := []struct{ in, want string }{
		// A re-indented line and a real change: the first becomes context.
		{"@@ -1,3 +1,3 @@\n a\n-\tb  c\n+    b c\n-d\n+e\n", "@@ -1,3 +1,3 @@\n a\n     b c\n-d\n+e\n"},
		// Only whitespace: the hunk goes.
		{"@@ -1,2 +1,2 @@\n-x \n+x\n y\n", ""},
		// Unequal runs (a blank line added) stay.
		{"@@ -1,1 +1,2 @@\n-x\n+x\n+\n", "@@ -1,1 +1,2 @@\n-x\n+x\n+\n"},
		// Two hunks, one of whitespace alone.
		{"@@ -1 +1 @@\n-a\n+ a\n@@ -9 +9 @@\n-p\n+q\n", "@@ -9 +9 @@\n-p\n+q\n"},
		{"Binary files a/x and b/x differ\n", "Binary files a/x and b/x differ\n"},
	}
	for _, c := range cases {
		got, changed := withoutWhitespaceChanges(c.in)
		if got != c.want || changed != (c.want != "") {
			t.Errorf("%q:\n got %q (%v)\nwant %q", c.in, got, changed, c.want)
		}
	}
}
