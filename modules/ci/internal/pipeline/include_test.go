package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// mapFiles is a repository's files for include tests; reads counts calls.
type mapFiles struct {
	files map[string]string
	reads int
}

func (m *mapFiles) Read(_ context.Context, path string) ([]byte, error) {
	m.reads++
	src, ok := m.files[path]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
	}
	return []byte(src), nil
}

func TestIncludeLocal(t *testing.T) {
	t.Parallel()
	files := &mapFiles{files: map[string]string{
		"ci/templates.yml": ".go:\n  image: golang:1.22\n  before_script: [go version]\nvariables: {FROM_INCLUDE: a, SHARED: include}\n",
		"ci/build.yml":     "include: {local: /ci/templates.yml}\nbuild:\n  extends: .go\n  stage: build\n  script: [go build]\n",
		"ci/test.yml":      "test:\n  extends: .go\n  script: [go test]\n  tags: [from-include]\n",
	}}
	src := `
include:
  - local: ci/build.yml
  - ci/test.yml
variables: {SHARED: main}
test:
  tags: [own]
`
	cfg, err := ParseFiles(context.Background(), []byte(src), files)
	if err != nil {
		t.Fatal(err)
	}
	if names := jobNames(cfg); names != "build test" {
		t.Errorf("jobs = %s", names)
	}
	test := jobNamed(t, cfg, "test")
	if !reflect.DeepEqual(test.Tags, []string{"own"}) || test.Image.Name != "golang:1.22" || test.Script[0] != "go test" {
		t.Errorf("test = %+v", test)
	}
	want := []Variable{{"FROM_INCLUDE", "a", true}, {"SHARED", "main", true}}
	if !reflect.DeepEqual(test.Variables, want) {
		t.Errorf("variables = %v", test.Variables)
	}
	if files.reads != 3 {
		t.Errorf("%d reads", files.reads)
	}
}

func TestIncludeErrors(t *testing.T) {
	t.Parallel()
	many, wide := map[string]string{}, "include:\n"
	for i := 0; i <= maxIncludes; i++ {
		many[fmt.Sprintf("f%d.yml", i)] = fmt.Sprintf("j%d: {script: x}\n", i)
		wide += fmt.Sprintf("  - f%d.yml\n", i)
	}
	deep := map[string]string{}
	for i := 0; i <= maxIncludeDepth; i++ {
		deep[fmt.Sprintf("f%d.yml", i)] = fmt.Sprintf("include: f%d.yml\n", i+1)
	}
	tests := []struct {
		name  string
		files map[string]string
		src   string
		want  string
	}{
		{"missing", nil, "include: nope.yml\nj: {script: x}\n", "Local file `nope.yml` does not exist!"},
		{"traversal stays in the repository", map[string]string{"etc/passwd": "x"}, "include: ../../etc/passwd\nj: {script: x}\n", "Included file `etc/passwd` does not have YAML mapping as root!"},
		{"empty", map[string]string{"a.yml": "\n"}, "include: a.yml\nj: {script: x}\n", "Local file `a.yml` is empty!"},
		{"syntax", map[string]string{"a.yml": "a: [\n"}, "include: a.yml\nj: {script: x}\n", "Included file `a.yml` does not have valid YAML syntax!"},
		{"cycle", map[string]string{"a.yml": "include: b.yml\n", "b.yml": "include: /a.yml\n"}, "include: a.yml\nj: {script: x}\n", "Local file `a.yml` includes itself (through a.yml > b.yml > a.yml)"},
		{"glob without a lister", nil, "include: 'ci/*.yml'\nj: {script: x}\n", "Local file `ci/*.yml`: wildcard includes need a repository to list"},
		{"project without a server", nil, "include: {project: a/b, file: c.yml}\nj: {script: x}\n", "Project `a/b` cannot be included: this configuration is not read from a repository"},
		{"local with inputs", nil, "include: [{local: a.yml, inputs: {a: b}}]\nj: {script: x}\n", "include:local inputs is not supported yet (`a.yml`)"},
		{"rules with manual", nil, "include: [{local: a.yml, rules: [{when: manual}]}]\nj: {script: x}\n", "include:rules:rule when unknown value: manual"},
		{"rules not a list", nil, "include: [{local: a.yml, rules: {if: $A}}]\nj: {script: x}\n", "include:rules config should be an array"},
		{"count", many, wide, "Maximum of 150 nested includes are allowed!"},
		{"depth", deep, "include: f0.yml\nj: {script: x}\n", "Maximum of 100 levels of nested includes are allowed!"},
		{"size", map[string]string{"big.yml": "j: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes)}, "include: [big.yml]\n", "Local file `big.yml` is too large"},
		{"total size", map[string]string{"a.yml": "k: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes-30), "b.yml": "k: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes-30), "c.yml": "k: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes-30), "d.yml": "k: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes-30), "e.yml": "k: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes-30)}, "include: [a.yml, b.yml, c.yml, d.yml, e.yml]\n", "its included files hold more than"},
		{"a string list item of a number", nil, "include: [1]\nj: {script: x}\n", "include config should be a hash, a string or an array containing strings and hashes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseFiles(context.Background(), []byte(tt.src), &mapFiles{files: tt.files})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
}

// A failure to read is not the file's fault: it comes back as it is.
func TestIncludeReadFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	_, err := ParseFiles(context.Background(), []byte("include: a.yml\nj: {script: x}\n"), failingFiles{boom})
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("err = %v", err)
	}
}

type failingFiles struct{ err error }

func (f failingFiles) Read(context.Context, string) ([]byte, error) { return nil, f.err }

// listedFiles is a mapFiles that lists directories too.
type listedFiles struct{ mapFiles }

func (l *listedFiles) List(_ context.Context, dir string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	for p := range l.files {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		name, _, isDir := strings.Cut(strings.TrimPrefix(p, prefix), "/")
		if isDir {
			name += "/"
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fs.ErrNotExist
	}
	return out, nil
}

func TestIncludeGlob(t *testing.T) {
	t.Parallel()
	files := &listedFiles{mapFiles{files: map[string]string{
		"ci/b.yml":           "b: {script: x}\n",
		"ci/a.yml":           "a: {script: x}\n",
		"ci/readme.md":       "not yaml: [",
		"ci/deep/c.yml":      "c: {script: x}\n",
		"ci/deep/more/d.yml": "d: {script: x}\n",
		"other/e.yml":        "e: {script: x}\n",
	}}}
	for pattern, want := range map[string]string{
		"ci/*.yml":     "a b",
		"/ci/*.yml":    "a b",
		"ci/**/*.yml":  "a b c d",
		"ci/de*/*.yml": "c",
		"*/*.yml":      "a b e",
	} {
		cfg, err := ParseFiles(context.Background(), []byte("include: '"+pattern+"'\n"), files)
		if err != nil {
			t.Errorf("%s: %v", pattern, err)
			continue
		}
		if got := jobNames(cfg); got != want {
			t.Errorf("%s: jobs %s, want %s", pattern, got, want)
		}
	}
	for pattern, want := range map[string]string{
		"ci/*.json":   "Included file `ci/*.json` does not match any files",
		"../*/*.yml":  "Local file `../*/*.yml` does not have a valid path!",
		"ci/[.yml":    "Local file `ci/[.yml` does not have a valid path!",
		"nothere/*.y": "Included file `nothere/*.y` does not match any files",
	} {
		_, err := ParseFiles(context.Background(), []byte("include: '"+pattern+"'\nj: {script: x}\n"), files)
		if err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %s", pattern, err, want)
		}
	}
	// A reader that cannot list: a clear refusal.
	_, err := ParseFiles(context.Background(), []byte("include: 'ci/*.yml'\nj: {script: x}\n"), &files.mapFiles)
	if err == nil || err.Error() != "Local file `ci/*.yml`: wildcard includes need a repository to list" {
		t.Errorf("err = %v", err)
	}
}

// ruledFiles is a repository that knows its pipeline's variables, as the
// service's reader does for include: rules.
type ruledFiles struct {
	*mapFiles
	vars map[string]string
}

func (f ruledFiles) IncludeRuleContext() ciexpr.RuleContext {
	return ciexpr.RuleContext{Lookup: func(name string) (string, bool) { v, ok := f.vars[name]; return v, ok }}
}

// include: rules include a file when a rule matches (not with never),
// against the reader's context; without one, an if sees no variable.
func TestIncludeRulesChooseFiles(t *testing.T) {
	t.Parallel()
	src := []byte(`include:
  - local: main.yml
    rules: [{if: $CI_COMMIT_BRANCH == "main"}]
  - local: never.yml
    rules: [{if: $CI_COMMIT_BRANCH, when: never}, {when: always}]
  - local: plain.yml
j: {script: x}
`)
	files := &mapFiles{files: map[string]string{"main.yml": "on-main: {script: m}\n", "never.yml": "never: {script: n}\n", "plain.yml": "plain: {script: p}\n"}}
	jobs := func(f Files) string {
		cfg, err := ParseFiles(context.Background(), src, f)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range cfg.Jobs {
			names = append(names, j.Name)
		}
		return strings.Join(names, " ")
	}
	if got := jobs(ruledFiles{files, map[string]string{"CI_COMMIT_BRANCH": "main"}}); got != "on-main plain j" {
		t.Errorf("on main: %s", got)
	}
	if got := jobs(ruledFiles{files, map[string]string{"CI_COMMIT_BRANCH": "topic"}}); got != "plain j" {
		t.Errorf("on topic: %s", got)
	}
	if got := jobs(files); got != "never plain j" {
		t.Errorf("without a context: %s", got)
	}
}
