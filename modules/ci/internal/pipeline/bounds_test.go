package pipeline

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// parseBounded parses src and fails when it takes longer than limit or
// allocates more than maxAlloc bytes.
func parseBounded(t *testing.T, src string, limit time.Duration, maxAlloc uint64) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Parse([]byte(src))
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if elapsed > limit {
		t.Errorf("Parse took %v, limit %v", elapsed, limit)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Parse: %v, %d MB allocated", elapsed, alloc>>20)
	if alloc > maxAlloc {
		t.Errorf("Parse allocated %d MB, limit %d MB", alloc>>20, maxAlloc>>20)
	}
	return err
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString(`.a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, ".%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", name, name, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = name
	}
	b.WriteString("job:\n  script: *i\n")
	return b.String()
}

// Not run in parallel: the memory figures are process-wide.
func TestBillionLaughs(t *testing.T) {
	err := parseBounded(t, billionLaughs(), 2*time.Second, 64<<20)
	if err == nil || !strings.Contains(err.Error(), "too large once its aliases are expanded") {
		t.Errorf("err = %v", err)
	}
}

// Many jobs each pointing at one wide list: no single alias is big, their
// sum is.
func TestWideAliasFanOut(t *testing.T) {
	var b strings.Builder
	b.WriteString(".l: &l [" + strings.Repeat("x,", 20000) + "x]\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "j%d: {script: *l}\n", i)
	}
	err := parseBounded(t, b.String(), 2*time.Second, 64<<20)
	if err == nil || !strings.Contains(err.Error(), "too large once its aliases are expanded") {
		t.Errorf("err = %v", err)
	}
}

// Merge keys are charged for what they copy.
func TestMergeKeyFanOut(t *testing.T) {
	var b strings.Builder
	b.WriteString(".t: &t {script: x")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, ", k%d: v", i)
	}
	b.WriteString("}\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "j%d: {<<: *t}\n", i)
	}
	err := parseBounded(t, b.String(), 2*time.Second, 128<<20)
	if err == nil || !strings.Contains(err.Error(), "too large once its aliases are expanded") {
		t.Errorf("err = %v", err)
	}
}

func TestSelfReferencingAlias(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"a: &a [*a]\n", "a: &a {b: *a}\n", "a: &a {<<: *a}\n"} {
		_, err := Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), "contains it") {
			t.Errorf("%q: err = %v", src, err)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	t.Parallel()
	src := "j: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	_, err := Parse([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("err = %v", err)
	}
}

// The largest document accepted, of the smallest nodes, parses within
// bounded time and memory (about 1 s and 200 MB allocated in all, most of
// it yaml.v3's node tree; the limit is loose for the race detector).
func TestLargestDocument(t *testing.T) {
	src := "j:\n  script: [" + strings.Repeat("a,", MaxConfigBytes/2-20) + "a]\n"
	if len(src) > MaxConfigBytes {
		t.Fatalf("test document is %d bytes", len(src))
	}
	if err := parseBounded(t, src, 20*time.Second, 512<<20); err != nil {
		t.Errorf("err = %v", err)
	}
}

// Defaults that grow with the square of the number of jobs are not spelled
// out: tens of thousands of jobs in two stages parse in linear memory.
func TestManyJobsInTwoStages(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxConfigBytes-100; i++ {
		stage := "build"
		if i%2 == 1 {
			stage = "deploy"
		}
		fmt.Fprintf(&b, "j%d: {stage: %s, script: x}\n", i, stage)
	}
	cfg, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs", len(cfg.Jobs))
	if err := parseBounded(t, b.String(), 20*time.Second, 512<<20); err != nil {
		t.Fatal(err)
	}
}

// Thousands of global variables and thousands of jobs adding one each.
func TestGlobalVariablesTimesJobs(t *testing.T) {
	var b strings.Builder
	b.WriteString("variables:\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "  V%d: x\n", i)
	}
	for i := 0; b.Len() < MaxConfigBytes-100; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, variables: {A: b}}\n", i)
	}
	err := parseBounded(t, b.String(), 20*time.Second, 512<<20)
	if err == nil || !strings.Contains(err.Error(), "variables in all") {
		t.Errorf("err = %v", err)
	}
}

// A realistic configuration: many jobs built from shared templates.
func TestManyTemplatedJobs(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(".t: &t\n  script: [make, make test, make install]\n  tags: [docker]\n  variables: {A: b, C: d}\n  artifacts: {paths: [out/], expire_in: 1 week}\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "job%d:\n  <<: *t\n  stage: build\n", i)
	}
	cfg, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Jobs) != 1000 || cfg.Jobs[999].Script[2] != "make install" {
		t.Errorf("jobs = %d", len(cfg.Jobs))
	}
}
