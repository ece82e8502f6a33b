package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirFiles reads included files from a directory standing for a
// repository.
type dirFiles string

func (d dirFiles) Read(_ context.Context, path string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(path)))
}

// TestCorpus parses each testdata/corpus/<project>/.gitlab-ci.yml, written
// in the styles real projects use today (includes read from the same
// directory), and compares its stages, its jobs with what each inherits,
// and the jobs of a push to main, of a topic branch and of a tag with
// want.txt beside it. Run with -args -update after an intended change
// and review the diff.
func TestCorpus(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil || len(dirs) < 15 {
		t.Fatalf("corpus: %d projects, %v", len(dirs), err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(filepath.Join(dir, ".gitlab-ci.yml"))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseFiles(context.Background(), src, dirFiles(dir))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := []byte(describeConfig(cfg))
			golden := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from want.txt:\n%s", dir, got)
			}
		})
	}
}

// describeConfig writes what a pipeline would run, one job a paragraph.
func describeConfig(cfg *Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stages: %s\n", strings.Join(cfg.Stages, ", "))
	for _, ref := range []RefInfo{
		{Name: "main", Source: SourcePush},
		{Name: "topic", Source: SourcePush},
		{Name: "v1.0.0", IsTag: true, Source: SourcePush},
	} {
		// The predefined variables rules usually test, as a push sets them.
		vars := map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_DEFAULT_BRANCH": "main", "CI_COMMIT_REF_NAME": ref.Name}
		if ref.IsTag {
			vars["CI_COMMIT_TAG"] = ref.Name
		} else {
			vars["CI_COMMIT_BRANCH"] = ref.Name
		}
		ref.Variables = func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
		stages, jobs, err := cfg.ForPipeline(ref, 1000)
		if err != nil {
			fmt.Fprintf(&b, "pipeline of %s: %v\n", ref.Name, err)
			continue
		}
		var names []string
		for _, j := range jobs {
			names = append(names, j.Name+decidedDifferently(cfg, j))
		}
		fmt.Fprintf(&b, "pipeline of %s: stages [%s] jobs [%s]\n", ref.Name, strings.Join(stages, ", "), strings.Join(names, ", "))
	}
	for _, j := range cfg.Jobs {
		fmt.Fprintf(&b, "\njob %s: stage %s, when %s, allow_failure %v", j.Name, j.Stage, j.When, j.AllowFailure)
		if j.AllowFailureExitCodes != nil {
			fmt.Fprintf(&b, " (exit codes %v)", j.AllowFailureExitCodes)
		}
		b.WriteString("\n")
		if j.Image != nil {
			fmt.Fprintf(&b, "  image: %s %q\n", j.Image.Name, j.Image.Entrypoint)
		}
		for _, s := range j.Services {
			fmt.Fprintf(&b, "  service: %s alias=%s command=%q\n", s.Name, s.Alias, s.Command)
		}
		for _, part := range []struct {
			name  string
			lines []string
		}{{"before_script", j.BeforeScript}, {"script", j.Script}, {"after_script", j.AfterScript}} {
			for _, line := range part.lines {
				fmt.Fprintf(&b, "  %s: %s\n", part.name, line)
			}
		}
		for _, v := range j.Variables {
			fmt.Fprintf(&b, "  variable: %s=%s\n", v.Key, v.Value)
		}
		if len(j.Tags) > 0 {
			fmt.Fprintf(&b, "  tags: %s\n", strings.Join(j.Tags, ", "))
		}
		if j.HasRules {
			fmt.Fprintf(&b, "  rules: %d\n", len(j.Rules))
		}
		if j.Only != nil || j.Except != nil || j.OnlyVariables != nil || j.ExceptVariables != nil || j.OnlyKubernetes {
			fmt.Fprintf(&b, "  only: %q variables %q kubernetes %v; except: %q variables %q\n", j.Only, j.OnlyVariables, j.OnlyKubernetes, j.Except, j.ExceptVariables)
		}
		if !j.DependsOnAllEarlier {
			fmt.Fprintf(&b, "  dependencies: %q\n", j.Dependencies)
		}
		caches := j.Caches
		if caches == nil && j.Cache != nil {
			caches = []Cache{*j.Cache}
		}
		for _, c := range caches {
			fmt.Fprintf(&b, "  cache: key=%s files=%q paths=%q policy=%s when=%s fallback=%q\n", c.Key, c.KeyFiles, c.Paths, c.Policy, c.When, c.FallbackKeys)
		}
		if a := j.Artifacts; a != nil {
			fmt.Fprintf(&b, "  artifacts: paths=%q exclude=%q when=%s expire_in=%q expose_as=%q reports=%v\n", a.Paths, a.Exclude, a.When, a.ExpireIn, a.ExposeAs, a.Reports)
		}
		if e := j.Environment; e != nil {
			fmt.Fprintf(&b, "  environment: %s url=%s action=%s on_stop=%s auto_stop_in=%s namespace=%s tier=%s\n", e.Name, e.URL, e.Action, e.OnStop, e.AutoStopIn, e.KubernetesNamespace, e.DeploymentTier)
		}
		if j.Retry > 0 || j.RetryWhen != nil {
			fmt.Fprintf(&b, "  retry: %d when %q\n", j.Retry, j.RetryWhen)
		}
		if j.Timeout != "" {
			fmt.Fprintf(&b, "  timeout: %s (%v)\n", j.Timeout, j.TimeoutAfter)
		}
		if j.Interruptible {
			b.WriteString("  interruptible\n")
		}
		if j.StartIn != "" {
			fmt.Fprintf(&b, "  start_in: %s (%v)\n", j.StartIn, j.StartAfter)
		}
		if j.Coverage != "" {
			fmt.Fprintf(&b, "  coverage: %s\n", j.Coverage)
		}
	}
	return b.String()
}

// decidedDifferently describes what rules changed in a pipeline's job
// against the job as parsed: its when, allow_failure and variables.
func decidedDifferently(cfg *Config, j Job) string {
	var parsed *Job
	for i := range cfg.Jobs {
		if cfg.Jobs[i].Name == j.Name {
			parsed = &cfg.Jobs[i]
		}
	}
	var out []string
	if parsed.When != j.When {
		out = append(out, string(j.When))
	}
	if parsed.AllowFailure != j.AllowFailure {
		out = append(out, fmt.Sprintf("allow_failure=%v", j.AllowFailure))
	}
	was := map[string]string{}
	for _, v := range parsed.Variables {
		was[v.Key] = v.Value
	}
	for _, v := range j.Variables {
		if w, ok := was[v.Key]; !ok || w != v.Value {
			out = append(out, v.Key+"="+v.Value)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, " ") + ")"
}
