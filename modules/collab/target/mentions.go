package target

import "strings"

// maxMentions bounds the users one text can mention, so that a hostile
// body of a million @a @b @c costs a bounded number of lookups.
const maxMentions = 100

// Mentions returns the usernames @mentioned in text, each once, in order of
// appearance. A mention is an @ that starts the text or follows a character
// that is not part of a word (so a@b.c, an e-mail address, is none),
// followed by a username: letters, digits, _ . and -, not starting with -
// (GitLab's username characters); a trailing dot ends a sentence, not the
// name. Text inside inline code (`...`) and fenced code blocks (```) is
// skipped, as GitLab's Markdown does not link it.
func Mentions(text string) []string {
	text = withoutCode(text)
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(text) && len(out) < maxMentions; i++ {
		if text[i] != '@' || (i > 0 && wordByte(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && nameByte(text[j]) && !(j == i+1 && text[j] == '-') {
			j++
		}
		name := strings.TrimRight(text[i+1:j], ".")
		i = j - 1
		if name == "" {
			continue
		}
		if key := strings.ToLower(name); !seen[key] {
			seen[key] = true
			out = append(out, name)
		}
	}
	return out
}

// wordByte is a byte of a word before an @: ASCII letters, digits, _, and
// any byte of a non-ASCII character (a@ after é is not a mention either).
func wordByte(b byte) bool {
	return b >= 0x80 || b == '_' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z')
}

func nameByte(b byte) bool {
	return b == '_' || b == '.' || b == '-' || (b >= '0' && b <= '9') || (b|0x20 >= 'a' && b|0x20 <= 'z')
}

// withoutCode blanks fenced code blocks (lines between ``` fences) and
// inline code spans (between single backticks on one line).
func withoutCode(text string) string {
	if !strings.Contains(text, "`") {
		return text
	}
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
			continue
		}
		var b strings.Builder
		inCode := false
		for _, part := range strings.SplitAfter(line, "`") {
			if !inCode {
				b.WriteString(part)
			} else {
				b.WriteByte(' ')
			}
			if strings.HasSuffix(part, "`") {
				inCode = !inCode
			}
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}
