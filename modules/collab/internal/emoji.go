package internal

import (
	_ "embed"
	"strings"
)

// emojiNames is the list of names an award may carry (emoji.txt): Fennec's
// own list of the common shortnames of the emoji set GitLab 9.x awards
// from, not GitLab's full set. GitLab refuses a name outside its set, so a
// name outside this one is refused the same way; a rarer emoji is one line
// of emoji.txt away.
//
//go:embed emoji.txt
var emojiNames string

// emojiAliases are the other names of an emoji that an award is stored
// under by its main name, as GitLab normalizes them: "+1" is stored, shown
// and counted as "thumbsup".
var emojiAliases = map[string]string{
	"+1":            "thumbsup",
	"-1":            "thumbsdown",
	"thumbs_up":     "thumbsup",
	"thumbs_down":   "thumbsdown",
	"satisfied":     "laughing",
	"simple_smile":  "slight_smile",
	"hankey":        "poop",
	"shit":          "poop",
	"facepunch":     "punch",
	"hand":          "raised_hand",
	"thinking_face": "thinking",
	"hugs":          "hugging",
	"party_popper":  "tada",
}

// The names of the two awards that are votes (an issue's or merge
// request's upvotes and downvotes), after normalizing.
const (
	upvoteName   = "thumbsup"
	downvoteName = "thumbsdown"
)

var knownEmoji = func() map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(emojiNames, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, name := range strings.Fields(line) {
			out[name] = true
		}
	}
	return out
}()

// normalizeEmoji is the name an award of name is stored under: an alias's
// main name, else name itself.
func normalizeEmoji(name string) string {
	if main, ok := emojiAliases[name]; ok {
		return main
	}
	return name
}

// knownEmojiName reports whether name (normalized) is an emoji an award may
// carry.
func knownEmojiName(name string) bool { return knownEmoji[name] }

// emojiOnly returns the normalized name of the emoji that body consists of
// (":+1:", " :tada: " with surrounding white space), or "" when body is
// anything else or names no known emoji.
func emojiOnly(body string) string {
	body = strings.TrimSpace(body)
	if len(body) < 3 || body[0] != ':' || body[len(body)-1] != ':' {
		return ""
	}
	name := normalizeEmoji(body[1 : len(body)-1])
	if !knownEmojiName(name) {
		return ""
	}
	return name
}
