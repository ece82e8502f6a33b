package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/parse")

// TestGolden parses every testdata/parse/*.yml and compares the resulting
// Config (or the error messages) with the .json file beside it. Run
// `go test ./modules/ci/internal/pipeline/ -run TestGolden -args -update` after an intended change and review the
// diff.
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "parse", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var result any
			cfg, err := Parse(src)
			var ce *ConfigError
			switch {
			case errors.As(err, &ce):
				result = map[string]any{"error": ce.Error(), "messages": ce.Messages}
			case err != nil:
				t.Fatal(err)
			default:
				result = cfg
			}
			got, err := json.MarshalIndent(result, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(file, ".yml") + ".json"
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
				t.Errorf("%s differs from the golden file:\n%s", file, got)
			}
		})
	}
}
