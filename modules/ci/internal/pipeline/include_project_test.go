package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// serverFiles is a repository that can read other projects: each project
// and ref its own mapFiles; a project missing from the map is one the user
// may not read.
type serverFiles struct {
	mapFiles
	projects map[string]map[string]map[string]string // project -> ref -> path -> content
	asked    []string
}

func (s *serverFiles) Project(_ context.Context, project, ref string) (Files, error) {
	s.asked = append(s.asked, project+"@"+ref)
	refs, ok := s.projects[project]
	if !ok {
		return nil, fmt.Errorf("%s: %w", project, ErrProjectNotFound)
	}
	if ref == "" {
		ref = "main"
	}
	files, ok := refs[ref]
	if !ok {
		return nil, fmt.Errorf("%s: %w", ref, ErrRefNotFound)
	}
	return &mapFiles{files: files}, nil
}

func TestIncludeProject(t *testing.T) {
	t.Parallel()
	files := &serverFiles{
		mapFiles: mapFiles{files: map[string]string{"local.yml": "local: {script: own}\n"}},
		projects: map[string]map[string]map[string]string{
			"group/templates": {
				"main": {
					"ci/go.yml":   "include: ci/base.yml\n.go: {extends: .base, image: golang}\n",
					"ci/base.yml": ".base: {tags: [shared]}\n",
					"ci/lint.yml": "lint: {script: golangci-lint run}\n",
					"local.yml":   "never: {script: read}\n",
				},
				"v1": {"ci/go.yml": ".go: {image: golang:1.0}\n"},
			},
		},
	}
	src := `include:
  - project: Group/Templates
    file: [/ci/go.yml, ci/lint.yml]
  - local: local.yml
build: {extends: .go, script: go build}
`
	cfg, err := ParseFiles(context.Background(), []byte(src), files)
	if err != nil {
		t.Fatal(err)
	}
	if names := jobNames(cfg); names != "lint local build" {
		t.Errorf("jobs = %s", names)
	}
	build := jobNamed(t, cfg, "build")
	if build.Image.Name != "golang" || !reflect.DeepEqual(build.Tags, []string{"shared"}) {
		t.Errorf("build = %+v", build)
	}
	// The project's path is read as GitLab reads it, lowercased; no ref
	// is its default branch.
	if !reflect.DeepEqual(files.asked, []string{"group/templates@"}) {
		t.Errorf("asked %q", files.asked)
	}

	cfg, err = ParseFiles(context.Background(), []byte("include: {project: group/templates, ref: v1, file: ci/go.yml}\nb: {extends: .go, script: x}\n"), files)
	if err != nil {
		t.Fatal(err)
	}
	if b := jobNamed(t, cfg, "b"); b.Image.Name != "golang:1.0" {
		t.Errorf("at v1: %+v", b)
	}
}

func TestIncludeProjectErrors(t *testing.T) {
	t.Parallel()
	projects := map[string]map[string]map[string]string{
		"g/t": {"main": {
			"a.yml":     "include: b.yml\n",
			"b.yml":     "include: {project: g/t, file: a.yml}\n",
			"empty.yml": "\n",
			"bad.yml":   "a: [\n",
			"list.yml":  "- a\n",
		}},
	}
	tests := []struct{ name, src, want string }{
		{"no access", "include: {project: g/secret, file: a.yml}\n", "Project `g/secret` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."},
		{"no ref", "include: {project: g/t, ref: nope, file: a.yml}\n", "Project `g/t` reference `nope` does not exist!"},
		{"no file", "include: {project: g/t, file: nope.yml}\n", "Project `g/t` file `nope.yml` does not exist!"},
		{"empty file", "include: {project: g/t, file: empty.yml}\n", "Project `g/t` file `empty.yml` is empty!"},
		{"bad YAML", "include: {project: g/t, file: bad.yml}\n", "Included file `bad.yml` does not have valid YAML syntax!"},
		{"not a mapping", "include: {project: g/t, file: list.yml}\n", "Included file `list.yml` does not have YAML mapping as root!"},
		{"file missing", "include: {project: g/t}\n", "Include `{project}` needs to match exactly one accessor!"},
		{"file a hash", "include: {project: g/t, file: {a: b}}\n", "Include `{project, file}` needs to match exactly one accessor!"},
		{"unknown key", "include: {project: g/t, file: a.yml, inputs: {a: b}}\n", "include:project inputs is not supported yet (`g/t`)"},
		{"cycle across the projects", "include: {project: g/t, file: a.yml}\n", "Local file `a.yml` includes itself (through g/t@HEAD:a.yml > g/t@HEAD:b.yml > g/t@HEAD:a.yml)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := &serverFiles{projects: projects}
			_, err := ParseFiles(context.Background(), []byte(tt.src+"j: {script: x}\n"), files)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
}

// A failure to reach a project is not the file's fault.
func TestIncludeProjectFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("store on fire")
	_, err := ParseFiles(context.Background(), []byte("include: {project: g/t, file: a.yml}\nj: {script: x}\n"), failingProjects{boom})
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "store on fire") {
		t.Errorf("err = %v", err)
	}
}

type failingProjects struct{ err error }

func (f failingProjects) Read(context.Context, string) ([]byte, error) { return nil, f.err }
func (f failingProjects) Project(context.Context, string, string) (Files, error) {
	return nil, f.err
}
