package markup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// bigGo is a 2,000-line Go file like the page benchmark's.
func bigGo() []byte {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; strings.Count(b.String(), "\n") < 2000; i++ {
		fmt.Fprintf(&b, "// F%d returns %d.\nfunc F%d(x int) int { return x*%d + len(\"s%d\") }\n", i, i, i, i, i)
	}
	return []byte(b.String())
}

// BenchmarkHighlightLarge: a 2,000-line Go file, the first view (no cache),
// chroma's tokeniser alone, and a view from the cache.
//
//	go test -run '^$' -bench BenchmarkHighlightLarge ./core/markup/
func BenchmarkHighlightLarge(b *testing.B) {
	code := bigGo()
	lexer := lexers.Match("big.go")
	b.Run("first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			highlightWith(lexer, code)
		}
	})
	b.Run("tokenise-only", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			it, _ := lexer.Tokenise(nil, string(code))
			for t := it(); t != chroma.EOF; t = it() {
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		Highlight("big.go", code)
		for i := 0; i < b.N; i++ {
			Highlight("big.go", code)
		}
	})
}
