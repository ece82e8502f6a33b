package internal

import "testing"

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"My Project":        "my-project",
		"Ünïcödé Prøject":   "unicode-project",
		"  --Hello, World!": "hello-world",
		"Straße & Co.":      "strasse-co",
		"already-a-path_1":  "already-a-path_1",
		"日本語":               "",
		"a.b.git":           "a.b.git",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
