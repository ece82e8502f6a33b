package markup

import (
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// instance is a file name glob matches (its wildcards filled in), or ""
// for a class it cannot fill.
func instance(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString("name")
		case '?':
			b.WriteByte('x')
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteByte(glob[i])
			}
		case '[':
			end := strings.IndexByte(glob[i:], ']')
			if end < 2 || glob[i+1] == '^' || glob[i+1] == '!' {
				return ""
			}
			b.WriteByte(glob[i+1])
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestMatchLexerIsChromas: for a name of every pattern of every lexer,
// with and without a backup suffix, in a directory, and names no
// pattern knows, matchLexer answers as lexers.Match does, the first time
// and from the memo.
func TestMatchLexerIsChromas(t *testing.T) {
	t.Parallel()
	names := []string{"", ".", "/", "README", "noext", "x.unknownext", "a/b/c.go", "dir.go/file", "go.mod", "CMakeLists.txt",
		"notes.txt", "Makefile", "Makefile.am", "x.go.swp", ".bashrc~", "f0001.go", "src/f0002.go"}
	// lexers.Match takes milliseconds a name: each pattern is tried
	// once, and one in four again with a backup suffix, in turn.
	k := 0
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		cfg := l.Config()
		for _, glob := range append(append([]string(nil), cfg.Filenames...), cfg.AliasFilenames...) {
			if n := instance(glob); n != "" {
				names = append(names, n)
				if k%4 == 0 {
					names = append(names, "dir/"+n+backupSuffixes[k/4%len(backupSuffixes)])
				}
				k++
			}
		}
	}
	name := func(l chroma.Lexer) string {
		if l == nil {
			return "none"
		}
		return l.Config().Name
	}
	want := map[string]string{}
	for _, n := range names {
		want[n] = name(lexers.Match(n))
	}
	for round := 0; round < 2; round++ {
		for _, n := range names {
			if got := name(matchLexer(n)); got != want[n] {
				t.Fatalf("round %d, %q: %s, chroma says %s", round, n, got, want[n])
			}
		}
	}
	if len(names) < 700 {
		t.Fatalf("only %d names tried", len(names))
	}
}
