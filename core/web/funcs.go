package web

import (
	"fmt"
	"hash/fnv"
	"html/template"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// funcs are the template functions every page may use.
var funcs = template.FuncMap{
	"avatar":    Avatar,
	"ago":       Ago,
	"date":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"isoTime":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"shortSHA":  ShortSHA,
	"size":      HumanSize,
	"pathEsc":   EscapePath,
	"plural":    Plural,
	"firstLine": FirstLine,
}

// Avatar is a visitor's avatar drawn by the page itself: the initials of
// name on a colour chosen from key (a username), so no request leaves the
// server for an image. size is "s" (24 px) or "l" (64 px).
func Avatar(name, key, size string) template.HTML {
	h := fnv.New32a()
	h.Write([]byte(key))
	return template.HTML(fmt.Sprintf(`<span class="avatar avatar-%s av-%d" aria-hidden="true">%s</span>`,
		template.HTMLEscapeString(size), h.Sum32()%8, template.HTMLEscapeString(Initials(name))))
}

// Initials are the first letters of a name's first two words, upper case
// ("Ada Lovelace" → "AL"); "?" for a name without letters.
func Initials(name string) string {
	var out []rune
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		r, _ := utf8.DecodeRuneInString(w)
		out = append(out, unicode.ToUpper(r))
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return string(out)
}

// Ago says how long ago t was, in the largest whole unit ("3 days ago").
func Ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return Plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return Plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return Plural(int(d/(24*time.Hour)), "day") + " ago"
	case d < 365*24*time.Hour:
		return Plural(int(d/(30*24*time.Hour)), "month") + " ago"
	}
	return Plural(int(d/(365*24*time.Hour)), "year") + " ago"
}

// Plural is n and the word, with an s when n is not 1.
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ShortSHA is a commit id's first eight characters.
func ShortSHA(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// HumanSize is a byte count in the largest unit that keeps it at least 1.
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// FirstLine is a text's first line.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
