package pipeline

import (
	"regexp"
	"strings"
	"time"
)

// Release is a job's `release:` keyword: the release the server makes,
// as the job's user, once the job's script has succeeded. Every string
// may hold variables ($CI_COMMIT_TAG, the job's own); the service expands
// them when the job ends. Description is the text itself: GitLab's
// release-cli reads it from a file when a file of that name exists in
// the job's workspace, which the server cannot see, so Fennec always
// takes the string as written.
type Release struct {
	TagName     string `json:"tag_name"`
	TagMessage  string `json:"tag_message,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description"`
	// Ref is what a missing tag is made from; empty is the pipeline's sha.
	Ref string `json:"ref,omitempty"`
	// ReleasedAt is written as an ISO 8601 time; empty is when it is made.
	ReleasedAt string `json:"released_at,omitempty"`
	// Milestones are read and checked, not kept: releases hold no
	// milestones in Fennec (the issues module stands above the releases).
	Milestones []string      `json:"milestones,omitempty"`
	Links      []ReleaseLink `json:"links,omitempty"`
}

// ReleaseLink is one of `release: assets: links:`.
type ReleaseLink struct {
	Name            string `json:"name"`
	URL             string `json:"url"`
	LinkType        string `json:"link_type,omitempty"`
	DirectAssetPath string `json:"direct_asset_path,omitempty"`
}

// Bounds of a release keyword, so that a file cannot make the server
// build an unbounded release when the job ends.
const (
	maxReleaseLinks      = 100
	maxReleaseMilestones = 100
)

// releaseLinkTypes are the link types GitLab's releases know.
var releaseLinkTypes = map[string]bool{"other": true, "runbook": true, "image": true, "package": true}

// releaseFilepath is GitLab's Releases::Link::FILEPATH_REGEX: a path from
// the root, of word characters, dots, dashes and slashes.
var releaseFilepath = regexp.MustCompile(`^/[\w.\-/]*$`)

// release reads `release:`, GitLab's Entry::Release and its assets' entries.
func (p *parser) release(v *value, loc string) *Release {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	p.unknownKeys(v, loc, "tag_name", "tag_message", "name", "description", "ref", "released_at", "milestones", "assets")
	r := &Release{}
	text := func(key, what string, required bool) string {
		e := v.get(key)
		switch {
		case e.isNull() || (required && blank(e)):
			if required {
				p.errorf("%s %s can't be blank", loc, what)
			}
		case e.kind != kindScalar:
			p.errorf("%s %s should be a string", loc, what)
		default:
			return e.text
		}
		return ""
	}
	r.TagName = text("tag_name", "tag name", true)
	r.Description = text("description", "description", true)
	r.Name = text("name", "name", false)
	r.TagMessage = text("tag_message", "tag message", false)
	r.Ref = text("ref", "ref", false)
	if r.Ref != "" && !releaseRefShape(r.Ref) {
		p.errorf("%s ref must be a valid ref", loc)
	}
	r.ReleasedAt = text("released_at", "released at", false)
	if r.ReleasedAt != "" {
		if _, err := ParseReleasedAt(r.ReleasedAt); err != nil {
			p.errorf("%s released at must be a valid datetime", loc)
		}
	}
	if m := v.get("milestones"); !m.isNull() {
		if m.isString() {
			r.Milestones = []string{m.text}
		} else if list, ok := stringItems(m); ok {
			r.Milestones = list
		} else {
			p.errorf("%s milestones should be an array of strings or a string", loc)
		}
		if len(r.Milestones) > maxReleaseMilestones {
			p.errorf("%s milestones has too many entries (maximum is %d)", loc, maxReleaseMilestones)
		}
	}
	if a := v.get("assets"); !a.isNull() {
		r.Links = p.releaseAssets(a, at(loc, "assets"))
	}
	return r
}

// releaseRefShape is whether ref can name a commit or a branch or tag:
// a sha, or a name git's check-ref-format accepts (variables are words).
func releaseRefShape(ref string) bool {
	probe := Expand(ref, func(string) (string, bool) { return "x", true })
	if probe == "" || strings.ContainsAny(probe, " ~^:?*[\\\x7f") || strings.Contains(probe, "..") ||
		strings.Contains(probe, "@{") || strings.HasPrefix(probe, "/") || strings.HasSuffix(probe, "/") ||
		strings.HasSuffix(probe, ".") || strings.HasSuffix(probe, ".lock") || strings.Contains(probe, "//") {
		return false
	}
	for _, c := range probe {
		if c < 0x20 {
			return false
		}
	}
	return true
}

// ParseReleasedAt reads a release's released_at, an ISO 8601 time (with
// or without its zone, which is then UTC).
func ParseReleasedAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, err
}

func (p *parser) releaseAssets(v *value, loc string) []ReleaseLink {
	if v.kind != kindMap {
		p.errorf("%s config should be a hash", loc)
		return nil
	}
	p.unknownKeys(v, loc, "links")
	links := v.get("links")
	if blank(links) || links.kind != kindSeq {
		if blank(links) {
			p.errorf("%s links can't be blank", loc)
		} else {
			p.errorf("%s links should be an array of hashes", loc)
		}
		return nil
	}
	if len(links.items) > maxReleaseLinks {
		p.errorf("%s links has too many entries (maximum is %d)", loc, maxReleaseLinks)
		return nil
	}
	out := make([]ReleaseLink, 0, len(links.items))
	for _, item := range links.items {
		if item == nil || item.kind != kindMap {
			p.errorf("%s links should be an array of hashes", loc)
			return nil
		}
	}
	linkLoc := at(at(loc, "links"), "link")
	for _, item := range links.items {
		p.unknownKeys(item, linkLoc, "name", "url", "link_type", "filepath", "direct_asset_path")
		var l ReleaseLink
		name, u := item.get("name"), item.get("url")
		switch {
		case blank(name):
			p.errorf("%s name can't be blank", linkLoc)
		case name.kind != kindScalar:
			p.errorf("%s name should be a string", linkLoc)
		default:
			l.Name = name.text
		}
		switch {
		case blank(u):
			p.errorf("%s url can't be blank", linkLoc)
		case u.kind != kindScalar || !validEnvironmentURL(u.text):
			p.errorf("%s url is blocked: Only allowed schemes are http, https", linkLoc)
		default:
			l.URL = u.text
		}
		if t := item.get("link_type"); !t.isNull() {
			if !t.isString() || !releaseLinkTypes[t.text] {
				p.errorf("%s link type should be one of: other, runbook, image, package", linkLoc)
			} else {
				l.LinkType = t.text
			}
		}
		// filepath is the older name of direct_asset_path.
		for _, key := range []string{"filepath", "direct_asset_path"} {
			if f := item.get(key); !f.isNull() {
				if !f.isString() || len(f.text) > 128 || !releaseFilepath.MatchString(Expand(f.text, func(string) (string, bool) { return "x", true })) {
					p.errorf("%s %s is in an invalid format", linkLoc, strings.ReplaceAll(key, "_", " "))
				} else {
					l.DirectAssetPath = f.text
				}
			}
		}
		out = append(out, l)
	}
	return out
}
