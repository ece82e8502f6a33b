package pipeline

import (
	"strings"
	"testing"
)

func TestParseResourceGroup(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "deploy: {script: x, resource_group: production}\n"+
		"per_env: {script: x, resource_group: 'deploy-$CI_ENVIRONMENT_NAME'}\n"+
		"free: {script: x}\n")
	if got := jobNamed(t, cfg, "deploy").ResourceGroup; got != "production" {
		t.Errorf("deploy's group = %q", got)
	}
	if got := jobNamed(t, cfg, "per_env").ResourceGroup; got != "deploy-$CI_ENVIRONMENT_NAME" {
		t.Errorf("a group with a variable is kept as written for creation to expand: %q", got)
	}
	if got := jobNamed(t, cfg, "free").ResourceGroup; got != "" {
		t.Errorf("a job without a group has %q", got)
	}
	// Through extends and default? default does not carry it in GitLab.
	cfg = mustParse(t, ".d: {resource_group: prod}\nj: {extends: .d, script: x}\n")
	if got := jobNamed(t, cfg, "j").ResourceGroup; got != "prod" {
		t.Errorf("an extended group = %q", got)
	}
}

func TestParseResourceGroupErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"a list", "j: {script: x, resource_group: [a]}\n", "jobs:j resource group should be a string"},
		{"a number", "j: {script: x, resource_group: 1}\n", "jobs:j resource group should be a string"},
		{"a hash", "j: {script: x, resource_group: {a: b}}\n", "jobs:j resource group should be a string"},
		{"too long", "j: {script: x, resource_group: " + strings.Repeat("r", MaxResourceGroupKey+1) + "}\n",
			"jobs:j resource group is too long (maximum is 255 characters)"},
		{"on a trigger job", "b: {trigger: g/p, resource_group: r}\n", "jobs:b resource_group is not supported yet"},
		{"in default", "default: {resource_group: r}\nj: {script: x}\n", "default config contains unknown keys: resource_group"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	// At the bound it is accepted.
	cfg := mustParse(t, "j: {script: x, resource_group: "+strings.Repeat("r", MaxResourceGroupKey)+"}\n")
	if got := len(jobNamed(t, cfg, "j").ResourceGroup); got != MaxResourceGroupKey {
		t.Errorf("a %d-character group kept as %d", MaxResourceGroupKey, got)
	}
}
