package pipeline

import (
	"strings"
	"testing"
)

// Current GitLab takes booleans as variable values (real files write
// `FLAG: true` in jobs and at the top) and hands jobs Ruby's text of them;
// its YAML 1.1 loader also reads unquoted yes/no/on/off as booleans.
// Quoted words and other scalars stay as written; lists and hashes
// without `value` are still refused. A job's variables hold the global
// ones first.
func TestVariablesTakeBooleans(t *testing.T) {
	t.Parallel()
	src := `
variables: {GLOBAL_ON: true, GLOBAL_WORD: "yes", DESCRIBED: {value: false, description: d}}
j:
  script: x
  variables: {A: true, B: False, C: yes, D: off, E: "true", F: "on", G: 0, H: TRUE}
  rules:
    - if: $A == "true"
      variables: {R: no}
`
	cfg, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	render := func(vars []Variable) string {
		var kv []string
		for _, v := range vars {
			kv = append(kv, v.Key+"="+v.Value)
		}
		return strings.Join(kv, " ")
	}
	if got, want := render(cfg.Variables), "GLOBAL_ON=true GLOBAL_WORD=yes DESCRIBED=false"; got != want {
		t.Errorf("global variables %q, want %q", got, want)
	}
	if got, want := render(cfg.Jobs[0].Variables), "GLOBAL_ON=true GLOBAL_WORD=yes DESCRIBED=false A=true B=false C=true D=false E=true F=on G=0 H=true"; got != want {
		t.Errorf("job variables %q, want %q", got, want)
	}
	jobs := cfg.JobsFor(RefInfo{Name: "main"})
	if len(jobs) != 1 {
		t.Fatalf("the rule on A == \"true\" chose %d jobs, want 1", len(jobs))
	}
	var r []string
	for _, v := range jobs[0].Variables {
		if v.Key == "R" {
			r = append(r, v.Value)
		}
	}
	if len(r) != 1 || r[0] != "false" {
		t.Errorf("rule variable R = %v, want [false]", r)
	}

	for _, bad := range []string{
		"variables: {A: [true]}\nj: {script: x}\n",
		"j: {script: x, variables: {A: {x: true}}}\n",
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse accepted %q", bad)
		}
	}
}
