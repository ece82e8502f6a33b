package pipeline

import (
	"reflect"
	"testing"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	vars := []Variable{
		{Key: "CI_COMMIT_REF_SLUG", Value: "feature-x"},
		{Key: "NAME", Value: "old"},
		{Key: "NAME", Value: "new"}, // the later one wins
		{Key: "_U1", Value: "u"},
	}
	tests := map[string]string{
		"review/$CI_COMMIT_REF_SLUG":            "review/feature-x",
		"https://${CI_COMMIT_REF_SLUG}.example": "https://feature-x.example",
		"$NAME":                                 "new",
		"$NAME-$_U1":                            "new-u",
		"$$NAME":                                "$NAME",
		"cost: 5$":                              "cost: 5$",
		"$UNKNOWN/x":                            "/x",
		"${UNCLOSED":                            "${UNCLOSED",
		"${1BAD}":                               "${1BAD}",
		"a $ b":                                 "a $ b",
		"${NAME}s":                              "news",
		"$NAMEs":                                "",
		"no variables":                          "no variables",
		"$$$NAME":                               "$new",
	}
	for in, want := range tests {
		if got := ExpandVariables(in, vars); got != want {
			t.Errorf("ExpandVariables(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPredefined(t *testing.T) {
	t.Parallel()
	facts := JobFacts{
		ServerURL: "https://git.example.com/", ServerVersion: "9.5.0", ServerRevision: "abc",
		JobID: 42, JobName: "rspec", JobStage: "test", JobToken: "tok",
		CommitSHA: "deadbeef", BeforeSHA: "cafe", RefName: "Feature/X",
		PipelineID: 7, ProjectID: 3, ProjectPath: "group/sub/proj",
	}
	vars := Predefined(facts)
	got := map[string]Variable{}
	for _, v := range vars {
		if _, dup := got[v.Key]; dup {
			t.Errorf("%s sent twice", v.Key)
		}
		got[v.Key] = v
	}
	want := map[string]string{
		"CI": "true", "GITLAB_CI": "true", "CI_SERVER": "yes", "CI_SERVER_NAME": "GitLab",
		"CI_SERVER_VERSION": "9.5.0", "CI_SERVER_REVISION": "abc",
		"CI_JOB_ID": "42", "CI_JOB_NAME": "rspec", "CI_JOB_STAGE": "test", "CI_JOB_TOKEN": "tok",
		"CI_COMMIT_SHA": "deadbeef", "CI_COMMIT_REF_NAME": "Feature/X", "CI_COMMIT_REF_SLUG": "feature-x",
		"CI_REGISTRY_USER": "gitlab-ci-token", "CI_REGISTRY_PASSWORD": "tok",
		"CI_REPOSITORY_URL":    "https://gitlab-ci-token:tok@git.example.com/group/sub/proj.git",
		"CI_PIPELINE_ID":       "7",
		"CI_CONFIG_PATH":       ".gitlab-ci.yml",
		"CI_PROJECT_ID":        "3",
		"CI_PROJECT_NAME":      "proj",
		"CI_PROJECT_NAMESPACE": "group/sub",
		"CI_PROJECT_PATH":      "group/sub/proj",
		"CI_PROJECT_PATH_SLUG": "group-sub-proj",
		"CI_PROJECT_URL":       "https://git.example.com/group/sub/proj",
		"CI_BUILD_ID":          "42", "CI_BUILD_TOKEN": "tok", "CI_BUILD_REF": "deadbeef", "CI_BUILD_BEFORE_SHA": "cafe",
		"CI_BUILD_REF_NAME": "Feature/X", "CI_BUILD_REF_SLUG": "feature-x", "CI_BUILD_NAME": "rspec",
		"CI_BUILD_STAGE": "test", "CI_BUILD_REPO": "https://gitlab-ci-token:tok@git.example.com/group/sub/proj.git",
	}
	for k, v := range want {
		if got[k].Value != v {
			t.Errorf("%s = %q, want %q", k, got[k].Value, v)
		}
	}
	for _, k := range []string{"CI_JOB_TOKEN", "CI_BUILD_TOKEN", "CI_REGISTRY_PASSWORD", "CI_REPOSITORY_URL", "CI_BUILD_REPO"} {
		if got[k].Public {
			t.Errorf("%s carries the token and must not be public", k)
		}
	}
	for _, k := range []string{"CI_COMMIT_TAG", "CI_BUILD_TAG", "CI_PIPELINE_TRIGGERED", "CI_BUILD_TRIGGERED", "CI_JOB_MANUAL",
		"CI_BUILD_MANUAL", "CI_RUNNER_ID", "CI_REGISTRY", "GITLAB_USER_ID", "CI_ENVIRONMENT_NAME"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s sent without its condition", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d variables, want %d", len(got), len(want))
	}

	facts.IsTag, facts.Triggered, facts.JobManual = true, true, true
	facts.RunnerID, facts.RunnerDescription, facts.RunnerTags = 9, "shell", []string{"a", "b"}
	facts.Registry, facts.RegistryImage = "registry.example.com", "registry.example.com/group/sub/proj"
	facts.UserID, facts.UserEmail = 5, "u@example.com"
	facts.EnvironmentName, facts.EnvironmentSlug, facts.EnvironmentURL = "review/x", "review-x-abcdef", "https://x.example"
	got = map[string]Variable{}
	for _, v := range Predefined(facts) {
		got[v.Key] = v
	}
	conditional := map[string]string{
		"CI_COMMIT_TAG": "Feature/X", "CI_BUILD_TAG": "Feature/X", "CI_PIPELINE_TRIGGERED": "true", "CI_BUILD_TRIGGERED": "true",
		"CI_JOB_MANUAL": "true", "CI_BUILD_MANUAL": "true", "CI_RUNNER_ID": "9", "CI_RUNNER_DESCRIPTION": "shell",
		"CI_RUNNER_TAGS": "a, b", "CI_REGISTRY": "registry.example.com", "CI_REGISTRY_IMAGE": "registry.example.com/group/sub/proj",
		"GITLAB_USER_ID": "5", "GITLAB_USER_EMAIL": "u@example.com", "CI_ENVIRONMENT_NAME": "review/x",
		"CI_ENVIRONMENT_SLUG": "review-x-abcdef", "CI_ENVIRONMENT_URL": "https://x.example",
	}
	for k, v := range conditional {
		if got[k].Value != v {
			t.Errorf("%s = %q, want %q", k, got[k].Value, v)
		}
	}
}

func TestLayersPrecedence(t *testing.T) {
	t.Parallel()
	v := func(k, val string) Variable { return Variable{Key: k, Value: val, Public: true} }
	l := Layers{
		Predefined: []Variable{v("CI", "true"), v("A", "predefined")},
		Deployment: []Variable{v("A", "deployment"), v("B", "deployment")},
		YAML:       []Variable{v("B", "yaml"), v("C", "yaml")},
		Group:      []Variable{v("C", "group"), v("D", "group")},
		Project:    []Variable{v("D", "project"), v("E", "project")},
		Trigger:    []Variable{v("E", "trigger")},
	}
	want := []Variable{v("CI", "true"), v("A", "deployment"), v("B", "yaml"), v("C", "group"), v("D", "project"), v("E", "trigger")}
	if got := l.Resolve(); !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve = %+v", got)
	}
	ordered := l.Ordered()
	if len(ordered) != 11 || ordered[0].Key != "CI" || ordered[10] != v("E", "trigger") {
		t.Errorf("Ordered = %+v", ordered)
	}
	if got := ExpandVariables("$A $E", ordered); got != "deployment trigger" {
		t.Errorf("expanding with Ordered = %q", got)
	}
}
