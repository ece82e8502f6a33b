package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRelease(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
r:
  script: echo
  variables: {NOTES: fine}
  release:
    tag_name: $CI_COMMIT_TAG
    tag_message: annotated
    name: 'Release $CI_COMMIT_TAG'
    description: 'notes: $NOTES'
    ref: $CI_COMMIT_SHA
    released_at: '2026-11-01T10:00:00Z'
    milestones: m1
    assets:
      links:
        - {name: bin, url: 'https://example.com/$CI_COMMIT_TAG/bin', link_type: package, filepath: /bin/app}
        - {name: docs, url: 'https://example.com/docs', direct_asset_path: /docs}
`)
	want := &Release{TagName: "$CI_COMMIT_TAG", TagMessage: "annotated", Name: "Release $CI_COMMIT_TAG",
		Description: "notes: $NOTES", Ref: "$CI_COMMIT_SHA", ReleasedAt: "2026-11-01T10:00:00Z", Milestones: []string{"m1"},
		Links: []ReleaseLink{
			{Name: "bin", URL: "https://example.com/$CI_COMMIT_TAG/bin", LinkType: "package", DirectAssetPath: "/bin/app"},
			{Name: "docs", URL: "https://example.com/docs", DirectAssetPath: "/docs"},
		}}
	if got := jobNamed(t, cfg, "r").Release; !reflect.DeepEqual(got, want) {
		t.Errorf("release = %+v\nwant %+v", got, want)
	}
	// A job through extends takes its template's release.
	cfg = mustParse(t, ".rel: {release: {tag_name: v1, description: d}}\nj: {extends: .rel, script: x, release: {milestones: [a, b]}}\n")
	if got := jobNamed(t, cfg, "j").Release; got == nil || got.TagName != "v1" || !reflect.DeepEqual(got.Milestones, []string{"a", "b"}) {
		t.Errorf("extended release = %+v", got)
	}
	if got := jobNamed(t, mustParse(t, "j: {script: x}\n"), "j").Release; got != nil {
		t.Errorf("release without the keyword = %+v", got)
	}
}

func TestParseReleaseErrors(t *testing.T) {
	t.Parallel()
	manyLinks := "[" + strings.Repeat("{name: a, url: 'https://x'},", maxReleaseLinks) + "{name: a, url: 'https://x'}]"
	manyMilestones := "[" + strings.Repeat("m,", maxReleaseMilestones) + "m]"
	tests := []struct {
		name, src, want string
	}{
		{"no script", "r: {release: {tag_name: v1, description: d}}\n", "jobs:r script can't be blank"},
		{"not a hash", "r: {script: x, release: v1}\n", "jobs:r:release config should be a hash"},
		{"no tag", "r: {script: x, release: {description: d}}\n", "jobs:r:release tag name can't be blank"},
		{"blank tag", "r: {script: x, release: {tag_name: ' ', description: d}}\n", "jobs:r:release tag name can't be blank"},
		{"tag not a string", "r: {script: x, release: {tag_name: [v1], description: d}}\n", "jobs:r:release tag name should be a string"},
		{"no description", "r: {script: x, release: {tag_name: v1}}\n", "jobs:r:release description can't be blank"},
		{"description a hash", "r: {script: x, release: {tag_name: v1, description: {a: b}}}\n", "jobs:r:release description should be a string"},
		{"unknown key", "r: {script: x, release: {tag_name: v1, description: d, upload_dir: x}}\n", "jobs:r:release config contains unknown keys: upload_dir"},
		{"released_at", "r: {script: x, release: {tag_name: v1, description: d, released_at: yesterday}}\n", "jobs:r:release released at must be a valid datetime"},
		{"ref", "r: {script: x, release: {tag_name: v1, description: d, ref: 'a..b'}}\n", "jobs:r:release ref must be a valid ref"},
		{"milestones", "r: {script: x, release: {tag_name: v1, description: d, milestones: {a: b}}}\n", "jobs:r:release milestones should be an array of strings or a string"},
		{"too many milestones", "r: {script: x, release: {tag_name: v1, description: d, milestones: " + manyMilestones + "}}\n",
			fmt.Sprintf("jobs:r:release milestones has too many entries (maximum is %d)", maxReleaseMilestones)},
		{"assets not a hash", "r: {script: x, release: {tag_name: v1, description: d, assets: [a]}}\n", "jobs:r:release:assets config should be a hash"},
		{"assets key", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{name: a, url: 'https://x'}], files: 1}}}\n", "jobs:r:release:assets config contains unknown keys: files"},
		{"no links", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: []}}}\n", "jobs:r:release:assets links can't be blank"},
		{"links not a list", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: {name: a}}}}\n", "jobs:r:release:assets links should be an array of hashes"},
		{"link not a hash", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [a]}}}\n", "jobs:r:release:assets links should be an array of hashes"},
		{"too many links", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: " + manyLinks + "}}}\n",
			fmt.Sprintf("jobs:r:release:assets links has too many entries (maximum is %d)", maxReleaseLinks)},
		{"link name", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{url: 'https://x'}]}}}\n", "jobs:r:release:assets:links:link name can't be blank"},
		{"link url", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{name: a}]}}}\n", "jobs:r:release:assets:links:link url can't be blank"},
		{"link scheme", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{name: a, url: 'ftp://x'}]}}}\n", "jobs:r:release:assets:links:link url is blocked: Only allowed schemes are http, https"},
		{"link type", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{name: a, url: 'https://x', link_type: binary}]}}}\n", "jobs:r:release:assets:links:link link type should be one of: other, runbook, image, package"},
		{"link path", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{name: a, url: 'https://x', filepath: 'bin'}]}}}\n", "jobs:r:release:assets:links:link filepath is in an invalid format"},
		{"link key", "r: {script: x, release: {tag_name: v1, description: d, assets: {links: [{name: a, url: 'https://x', size: 1}]}}}\n", "jobs:r:release:assets:links:link config contains unknown keys: size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestParseReleasedAt(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Time{
		"2026-11-01T10:00:00Z":      time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2026-11-01T12:00:00+02:00": time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2026-11-01T10:00:00":       time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"2026-11-01":                time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := ParseReleasedAt(in); err != nil || !got.Equal(want) {
			t.Errorf("ParseReleasedAt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseReleasedAt("soon"); err == nil {
		t.Error("ParseReleasedAt(soon) = nil error")
	}
}

// Release jobs are bounded by the links and milestones limits: a file of
// the largest size filled with release jobs at those limits parses within
// the usual work and memory.
func TestManyReleaseJobs(t *testing.T) {
	links := "[" + strings.Repeat("{name: a, url: 'https://x'},", maxReleaseLinks-1) + "{name: a, url: 'https://x'}]"
	var b strings.Builder
	for i := 0; b.Len() < MaxConfigBytes-4000; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, release: {tag_name: v%d, description: d, assets: {links: %s}}}\n", i, i, links)
	}
	if err := parseBounded(t, b.String(), maxWork, 512<<20); err != nil {
		t.Errorf("err = %v", err)
	}
}
