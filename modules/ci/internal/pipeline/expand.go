package pipeline

import (
	"net/url"
	"strings"
)

// Expand replaces $NAME and ${NAME} in s with the value lookup gives, and
// $$ with a single $. A variable lookup does not know expands to nothing,
// as GitLab does when it expands an environment's name and url. A '$' not
// followed by a name, '{name}' or '$' stays as it is.
func Expand(s string, lookup func(name string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		next := s[i+1]
		switch {
		case next == '$':
			b.WriteByte('$')
			i += 2
		case next == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 || !isVariableName(s[i+2:i+2+end]) {
				b.WriteByte('$')
				i++
				continue
			}
			v, _ := lookup(s[i+2 : i+2+end])
			b.WriteString(v)
			i += 2 + end + 1
		case isNameStart(next):
			j := i + 2
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			v, _ := lookup(s[i+1 : j])
			b.WriteString(v)
			i = j
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String()
}

// ExpandVariables expands s with vars; when a key appears more than once the
// last one wins, as with Layers.Ordered.
func ExpandVariables(s string, vars []Variable) string {
	return Expand(s, func(name string) (string, bool) {
		for i := len(vars) - 1; i >= 0; i-- {
			if vars[i].Key == name {
				return vars[i].Value, true
			}
		}
		return "", false
	})
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

func isVariableName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

// validEnvironmentURL reports whether an environment url is an http(s) URL
// once its variables are expanded: the variables are replaced by a plain
// word first, since their values are not known when the file is parsed.
func validEnvironmentURL(raw string) bool {
	probe := Expand(raw, func(string) (string, bool) { return "x", true })
	u, err := url.Parse(probe)
	if err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
