package pipeline

import (
	"regexp"
	"strings"
	"testing"
)

func TestRefSlug(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"master":                       "master",
		"feature/Foo_Bar":              "feature-foo-bar",
		"-lead-and-trail-":             "lead-and-trail",
		"v1.2.3":                       "v1-2-3",
		"a--b":                         "a--b", // dashes are not collapsed
		"über":                         "ber",
		strings.Repeat("a", 70):        strings.Repeat("a", 63),
		strings.Repeat("a", 62) + "/b": strings.Repeat("a", 62),
	}
	for in, want := range tests {
		if got := RefSlug(in); got != want {
			t.Errorf("RefSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProjectPathSlug(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"group/project":    "group-project",
		"Group/My_Project": "group-my_project",
		"a/sub.group/b":    "a-sub-group-b",
		"a-/-b":            "a-b",
		"--x--":            "x",
	}
	for in, want := range tests {
		if got := ProjectPathSlug(in); got != want {
			t.Errorf("ProjectPathSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnvironmentSlug(t *testing.T) {
	t.Parallel()
	suffix := regexp.MustCompile(`^[a-z0-9]{6}$`)
	tests := []struct {
		name, prefix string
		altered      bool
	}{
		{"production", "production", false},
		{"staging-1234567890123456", "staging-1234567890123456", false}, // 24 characters
		{"staging-12345678901234567", "staging-123456789-", true},       // 25: cut
		{"9-staging-123456789012345", "env-9-staging-123-", true},
		{"PRODUCTION", "production-", true},
		{"review/1-foo", "review-1-foo-", true},
		{"1-foo", "env-1-foo-", true},
		{"1/foo", "env-1-foo-", true},
		{"foo-", "foo-", true},
		{"foo--bar", "foo-bar-", true},
		{"foo**bar", "foo-bar-", true},
		{"*-foo", "env-foo-", true},
		{"staging-12345678-", "staging-12345678-", true},
		{"staging-12345678-01234567", "staging-12345678-", true},
		{"", "env-", true},
	}
	for _, tt := range tests {
		got := EnvironmentSlug(tt.name)
		if !tt.altered {
			if got != tt.prefix {
				t.Errorf("EnvironmentSlug(%q) = %q, want %q", tt.name, got, tt.prefix)
			}
			continue
		}
		if !strings.HasPrefix(got, tt.prefix) || !suffix.MatchString(strings.TrimPrefix(got, tt.prefix)) {
			t.Errorf("EnvironmentSlug(%q) = %q, want %q + 6 characters", tt.name, got, tt.prefix)
		}
		if len(got) > 24 {
			t.Errorf("EnvironmentSlug(%q) = %q is longer than 24", tt.name, got)
		}
		if again := EnvironmentSlug(tt.name); again != got {
			t.Errorf("EnvironmentSlug(%q) is not stable: %q then %q", tt.name, got, again)
		}
	}
	if EnvironmentSlug("Review/A") == EnvironmentSlug("review/a") {
		t.Error("names that differ must get different suffixes")
	}
}
