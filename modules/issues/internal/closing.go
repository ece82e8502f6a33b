package internal

import (
	"regexp"
	"strconv"
	"strings"
)

// IssueRef is a reference to an issue in a text: "#12" (Project empty: the
// project the text belongs to), "other#12" (a project of the same
// namespace) or "group/project#12".
type IssueRef struct {
	Project string
	IID     int64
}

// refPattern is one issue reference: an optional project path (namespaces
// and subgroups separated by "/") then #iid.
const refPattern = `(?:[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*)?#[0-9]+`

// closingPattern is GitLab's issue_closing_pattern (Settings
// gitlab.issue_closing_pattern): close, closes, closed, closing, fix, fixes,
// fixed, fixing, resolve, resolves, resolved, resolving, an optional colon,
// then one or more references ("issue #1", "#1, #2 and group/p#3"). Unlike
// GitLab's it is case-insensitive throughout (GitLab only accepts either
// case of the first letter) and the keyword must start a word, so
// "prefixes #1" closes nothing.
var closingPattern = regexp.MustCompile(`(?i)\b(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)):? +` +
	`((?:(?:issues? +)?` + refPattern + `(?:, *| +and +)?)+)`)

// oneRef picks the references out of a closing phrase's list, and out of
// any text for mentions; a reference must not follow a word character, "&"
// (an HTML entity, "&#39;") or a slash. As in GitLab, the number ends where
// the digits do ("#1A" names issue 1).
var oneRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_&/#])((?:[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)*)?)#([0-9]+)`)

// maxRefsPerText bounds what one text may name, so a hostile commit message
// cannot make a push touch millions of issues.
const maxRefsPerText = 100

// ClosingRefs returns the issues text says it closes, in order of first
// appearance, without repeats.
func ClosingRefs(text string) []IssueRef {
	var out []IssueRef
	seen := map[IssueRef]bool{}
	for _, m := range closingPattern.FindAllStringSubmatch(text, -1) {
		for _, r := range refsIn(" " + m[1]) {
			if !seen[r] && len(out) < maxRefsPerText {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// MentionedRefs returns every issue text references, closing or not.
func MentionedRefs(text string) []IssueRef {
	var out []IssueRef
	seen := map[IssueRef]bool{}
	for _, r := range refsIn(text) {
		if !seen[r] && len(out) < maxRefsPerText {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

func refsIn(text string) []IssueRef {
	var out []IssueRef
	for _, m := range oneRef.FindAllStringSubmatch(text, -1) {
		n, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		out = append(out, IssueRef{Project: strings.Trim(m[1], "."), IID: n})
	}
	return out
}
