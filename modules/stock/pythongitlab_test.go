package stock_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// debianPython is the interpreter Debian's python3-gitlab is installed
// for; a python3 earlier on PATH (pyenv, a virtualenv) may not have it.
const debianPython = "/usr/bin/python3"

// TestPythonGitlab runs each scenario under testdata/pythongitlab (a
// script written as a user writes one, against python-gitlab, the second
// real client beside client-go) on a fresh stock server. The scripts check
// exact results themselves and exit non-zero on the first difference.
func TestPythonGitlab(t *testing.T) {
	if out, err := exec.Command(debianPython, "-c", "import gitlab").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3-gitlab is required in CI (apt-get install python3-gitlab): %v %s", err, out)
		}
		t.Skipf("python3-gitlab not installed (apt-get install python3-gitlab): %v", err)
	}
	dir, err := filepath.Abs("testdata/pythongitlab")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join(dir, "*.py"))
	if err != nil {
		t.Fatal(err)
	}
	var ran int
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".py")
		if name == "check" {
			continue // the scenarios' shared module
		}
		ran++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := stocktest.Start(t)
			cmd := exec.Command(debianPython, script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "FENNEC_URL="+srv.URL, "FENNEC_ROOT_TOKEN="+srv.RootToken,
				"PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH="+dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\n%s", filepath.Base(script), err, out.String())
			}
			t.Logf("%s", out.String())
		})
	}
	if ran < 4 {
		t.Fatalf("found only %d scenarios in %s", ran, dir)
	}
}
