package markup

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// chroma's lexers.Match tries every file name pattern of every lexer, and
// each again with each backup suffix: about 9,000 filepath.Match calls, 6
// ms a file name. A merge request's Changes tab highlights 50 files, a
// commit page as many: most of their time went there. matchLexer gives
// the same answer from a memo. Match's answer depends only on which
// (pattern, suffix) pairs match the name's base, so that set is the
// memo's key; finding it needs only the patterns whose literal tail the
// name ends with (indexed by the tail's last byte), and the few that end
// in a wildcard.

// backupSuffixes are the suffixes Match also tries after each pattern
// (chroma's registry.go, ignoredSuffixes); TestMatchLexerIsChromas
// compares the answers.
var backupSuffixes = []string{"~", ".bak", ".old", ".orig", ".dpkg-dist", ".dpkg-old", ".ucf-dist", ".ucf-new", ".ucf-old",
	".rpmnew", ".rpmorig", ".rpmsave", ".in"}

// maxLexerMemo bounds the memo; the keys are sets of patterns, so a few
// hundred are ever seen.
const maxLexerMemo = 4096

type lexerPattern struct {
	id      int
	pattern string
}

type lexerIndex struct {
	byLastByte map[byte][]lexerPattern
	wildTail   []lexerPattern // patterns ending in a wildcard
	mu         sync.Mutex
	memo       map[string]chroma.Lexer
}

var lexerPatterns = sync.OnceValue(func() *lexerIndex {
	x := &lexerIndex{byLastByte: map[byte][]lexerPattern{}, memo: map[string]chroma.Lexer{}}
	id := 0
	for _, l := range lexers.GlobalLexerRegistry.Lexers {
		cfg := l.Config()
		for _, glob := range append(append([]string(nil), cfg.Filenames...), cfg.AliasFilenames...) {
			for _, suffix := range append([]string{""}, backupSuffixes...) {
				p := lexerPattern{id: id, pattern: glob + suffix}
				id++
				if tail := p.pattern[strings.LastIndexAny(p.pattern, `*?[]\`)+1:]; tail != "" {
					x.byLastByte[tail[len(tail)-1]] = append(x.byLastByte[tail[len(tail)-1]], p)
				} else {
					x.wildTail = append(x.wildTail, p)
				}
			}
		}
	}
	return x
})

// matchLexer is lexers.Match(filename).
func matchLexer(filename string) chroma.Lexer {
	base := filepath.Base(filename)
	if base == "" {
		return lexers.Match(filename)
	}
	x := lexerPatterns()
	var key strings.Builder
	for _, list := range [2][]lexerPattern{x.byLastByte[base[len(base)-1]], x.wildTail} {
		for _, p := range list {
			if ok, _ := filepath.Match(p.pattern, base); ok {
				key.WriteString(strconv.Itoa(p.id))
				key.WriteByte(',')
			}
		}
	}
	k := key.String()
	x.mu.Lock()
	l, ok := x.memo[k]
	x.mu.Unlock()
	if ok {
		return l
	}
	l = lexers.Match(filename)
	x.mu.Lock()
	if len(x.memo) >= maxLexerMemo {
		clear(x.memo)
	}
	x.memo[k] = l
	x.mu.Unlock()
	return l
}
