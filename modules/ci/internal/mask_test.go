package internal

import (
	"strings"
	"testing"
)

// The masker hides every secret whatever the chunk boundaries: the same
// input cut at every place (and byte by byte) gives the same stored trace.
func TestMaskerChunkBoundaries(t *testing.T) {
	secrets := []string{"hunter2-very-secret", "0123456789abcdef", "0123456789abcdefXYZ", ""}
	cases := map[string]string{
		"pw=hunter2-very-secret tok=0123456789abcdef\n": "pw=[MASKED] tok=[MASKED]\n",
		// The longer of two secrets that start alike is hidden whole.
		"a 0123456789abcdefXYZ b":           "a [MASKED] b",
		"a 0123456789abcdefXY b":            "a [MASKED]XY b",
		"hunter2-very-secrethunter2-very-s": "[MASKED]hunter2-very-s", // a prefix at the end is released by close
		"hhunter2-very-secret":              "h[MASKED]",
		"no secret here, 0123 hunter":       "no secret here, 0123 hunter",
	}
	for in, want := range cases {
		for cut := 0; cut <= len(in); cut++ {
			m := newMasker(secrets)
			got := string(m.write([]byte(in[:cut]))) + string(m.write([]byte(in[cut:]))) + string(m.close())
			if got != want {
				t.Errorf("%q cut at %d: %q, want %q", in, cut, got, want)
			}
		}
		m := newMasker(secrets)
		var b strings.Builder
		for i := range len(in) {
			b.Write(m.write([]byte{in[i]}))
		}
		b.Write(m.close())
		if b.String() != want {
			t.Errorf("%q byte by byte: %q, want %q", in, b.String(), want)
		}
	}
}

// What may still become a secret is held back, and only that.
func TestMaskerHoldsOnlyAPossibleSecret(t *testing.T) {
	m := newMasker([]string{"hunter2-very-secret"})
	if got := string(m.write([]byte("line one\npw=hunter2-ve"))); got != "line one\npw=" {
		t.Fatalf("first chunk stored as %q", got)
	}
	if got := string(m.write([]byte("ry-secret done\n"))); got != "[MASKED] done\n" {
		t.Fatalf("second chunk stored as %q", got)
	}
	if got := string(m.write([]byte("hunter3\n"))); got != "hunter3\n" {
		t.Fatalf("a near miss stored as %q", got)
	}
	if newMasker([]string{"", ""}) != nil {
		t.Fatal("a masker without secrets")
	}
}
