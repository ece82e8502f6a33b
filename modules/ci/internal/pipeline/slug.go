package pipeline

import (
	"crypto/sha256"
	"strings"
)

// RefSlug is CI_COMMIT_REF_SLUG: the ref lowercased, every character other
// than [a-z0-9] replaced by '-', cut to 63 bytes, without leading or trailing
// '-'. Usable in host names and URLs.
func RefSlug(ref string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(ref) {
		if b.Len() == 63 {
			break
		}
		if isSlugChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// ProjectPathSlug is CI_PROJECT_PATH_SLUG: the full path lowercased, every
// run of characters other than [a-z0-9_-] replaced by one '-', without
// leading or trailing '-' (Rails' parameterize; non-ASCII letters become
// separators instead of being transliterated).
func ProjectPathSlug(path string) string {
	var b strings.Builder
	pendingDash := false
	for _, r := range strings.ToLower(path) {
		if isSlugChar(r) || r == '_' || r == '-' {
			if r == '-' {
				pendingDash = true
				continue
			}
			if pendingDash && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingDash = false
			b.WriteRune(r)
			continue
		}
		pendingDash = true
	}
	return b.String()
}

func isSlugChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
}

// environmentSlugMax is the longest environment slug: OpenShift's limit.
const environmentSlugMax = 24

// EnvironmentSlug is an environment's slug with GitLab's rules: lowercase
// letters and digits with every other character replaced by '-', starting
// with a letter (else "env-" is put in front), no repeated dashes, at most
// 24 characters, no trailing dash. When that changed the name at all, the
// slug is cut to 17 characters and a '-' and a 6-character suffix are
// appended so that names differing only in punctuation do not collide.
// GitLab draws the suffix at random; here it is derived from a hash of the
// name so the same name always gets the same slug.
func EnvironmentSlug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if isSlugChar(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	slug := b.String()
	if slug == "" || slug[0] < 'a' || slug[0] > 'z' {
		slug = "env-" + slug
	}
	for strings.Contains(slug, "--") {
		slug = strings.ReplaceAll(slug, "--", "-")
	}
	if len(slug) > environmentSlugMax {
		slug = slug[:environmentSlugMax]
	}
	slug = strings.TrimSuffix(slug, "-")
	if slug != name {
		if len(slug) > 17 {
			slug = slug[:17]
		}
		if !strings.HasSuffix(slug, "-") {
			slug += "-"
		}
		slug += slugSuffix(name)
	}
	return slug
}

// slugSuffix is six [a-z0-9] characters derived from name.
func slugSuffix(name string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte(name))
	suffix := make([]byte, 6)
	for i := range suffix {
		suffix[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(suffix)
}
