package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// parseBounded parses src and fails when it did more work than maxWork
// (YAML nodes built, aliases counted at full size, plus entries merged by
// extends and nodes visited for !reference) or allocated more than
// maxAlloc bytes. Counting work instead of timing it keeps the check
// exact on a loaded machine; the benchmarks below give the times.
func parseBounded(t *testing.T, src string, maxWork int, maxAlloc uint64) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, stats, err := parse(context.Background(), []byte(src), nil)
	runtime.ReadMemStats(&after)
	work := stats.nodes + stats.resolveWork
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Parse: %d nodes, %d resolve work, %d MB allocated", stats.nodes, stats.resolveWork, alloc>>20)
	if work > maxWork {
		t.Errorf("Parse did %d units of work, limit %d", work, maxWork)
	}
	if alloc > maxAlloc {
		t.Errorf("Parse allocated %d MB, limit %d MB", alloc>>20, maxAlloc>>20)
	}
	return err
}

// maxWork is the most a parse may do: the node budget and the resolve
// budget, each overrun by at most one charge.
const maxWork = 2*maxExpandedNodes + 2*maxResolveWork

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
	err := parseBounded(t, billionLaughs(), maxWork, 64<<20)
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
	err := parseBounded(t, b.String(), maxWork, 64<<20)
	if err == nil || !strings.Contains(err.Error(), "too large once its aliases are expanded") {
		t.Errorf("err = %v", err)
	}
}

func mergeKeyFanOut() string {
	var b strings.Builder
	b.WriteString(".t: &t {script: x")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, ", k%d: v", i)
	}
	b.WriteString("}\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "j%d: {<<: *t}\n", i)
	}
	return b.String()
}

// Merge keys are charged for what they copy: the refusal comes once the
// budget is spent, not after copying five million entries.
func TestMergeKeyFanOut(t *testing.T) {
	err := parseBounded(t, mergeKeyFanOut(), maxExpandedNodes+10_000, 128<<20)
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

func largestDocument() string {
	return "j:\n  script: [" + strings.Repeat("a,", MaxConfigBytes/2-20) + "a]\n"
}

// The largest document accepted, of the smallest nodes, parses with one
// node per item and bounded memory (about 200 MB allocated in all, most of
// it yaml.v3's node tree; the limit is loose for the race detector).
// BenchmarkLargestDocument gives its time.
func TestLargestDocument(t *testing.T) {
	src := largestDocument()
	if len(src) > MaxConfigBytes {
		t.Fatalf("test document is %d bytes", len(src))
	}
	items := MaxConfigBytes/2 - 19
	if err := parseBounded(t, src, items+10, 512<<20); err != nil {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkLargestDocument(b *testing.B) {
	src := []byte(largestDocument())
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMergeKeyFanOut(b *testing.B) {
	src := []byte(mergeKeyFanOut())
	for b.Loop() {
		if _, err := Parse(src); err == nil {
			b.Fatal("accepted")
		}
	}
}

// A thousand jobs extending a template of five thousand keys: the merges
// are counted and refused past the budget.
func TestExtendsFanOut(t *testing.T) {
	var b strings.Builder
	b.WriteString(".t: {script: x")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, ", k%d: v", i)
	}
	b.WriteString("}\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "j%d: {extends: .t, k0: w}\n", i)
	}
	err := parseBounded(t, b.String(), maxWork, 256<<20)
	if err == nil || !strings.Contains(err.Error(), "extends and !reference expand it past") {
		t.Errorf("err = %v", err)
	}
}

// References that double at each level: bounded by depth and budget.
func TestReferenceFanOut(t *testing.T) {
	var b strings.Builder
	b.WriteString(".r0: {s: [" + strings.Repeat("x,", 1000) + "x]}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, ".r%d: {s: [!reference [.r%d, s], !reference [.r%d, s], !reference [.r%d, s], !reference [.r%d, s]]}\n", i, i-1, i-1, i-1, i-1)
	}
	b.WriteString("j: {script: !reference [.r9, s]}\n")
	err := parseBounded(t, b.String(), maxWork, 256<<20)
	if err == nil || !strings.Contains(err.Error(), "expand it past") {
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
	if err := parseBounded(t, b.String(), maxWork, 512<<20); err != nil {
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
	err := parseBounded(t, b.String(), maxWork, 512<<20)
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

// Thousands of jobs sharing a list of rules through an anchor: the rules
// are compiled once, and deciding every job against long variable values
// stays linear (RE2).
func TestSharedRulesTimesJobs(t *testing.T) {
	var b strings.Builder
	b.WriteString(".r: &r\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "  - {if: '$V%d =~ /(a|aa)+b$/ && $X != \"y\"', changes: ['src/**/*.go', '*.{md,txt}'], when: manual}\n", i)
	}
	// As many jobs as the alias budget lets share them.
	for i := 0; i < 9000; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, rules: *r}\n", i)
	}
	if err := parseBounded(t, b.String(), maxWork, 512<<20); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 4096)
	jobs := cfg.JobsFor(RefInfo{Name: "main",
		Variables: func(string) (string, bool) { return long, true },
		Changed:   func(string) ([]string, bool) { return []string{"docs/a.go", "README.rst"}, true }})
	if len(jobs) != 0 {
		t.Fatalf("%d of %d jobs decided in", len(jobs), len(cfg.Jobs))
	}
	t.Logf("%d jobs decided", len(cfg.Jobs))
}

// A file of jobs that each ask for GitLab's 200 instances: refused once
// the instances of the whole file pass maxParallelInstances, before they
// cost more memory than the jobs a file may write (TestManyJobsInTwoStages
// has the same limit).
func TestParallelFanOut(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxConfigBytes-100; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, parallel: 200}\n", i)
	}
	err := parseBounded(t, b.String(), maxWork, 512<<20)
	if err == nil || err.Error() != "The CI configuration is too large: its parallel jobs make more than 20000 jobs in all" {
		t.Errorf("err = %v", err)
	}
}

// Matrix instances each carry the global variables: counted with every
// job's, so thousands of globals times the instances are refused.
func TestParallelMatrixTimesGlobalVariables(t *testing.T) {
	var b strings.Builder
	b.WriteString("variables:\n")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, "  V%d: x\n", i)
	}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, parallel: {matrix: [{A: %s, B: %s}]}}\n", i, seq(10), seq(20))
	}
	err := parseBounded(t, b.String(), maxWork, 256<<20)
	if err == nil || !strings.Contains(err.Error(), "variables in all") {
		t.Errorf("err = %v", err)
	}
}

// parallelAtTheLimit is the largest expansion a file may ask for: jobs
// of 200 matrix instances each, up to maxParallelInstances in all; with
// expand false, the same jobs without `parallel:`.
func parallelAtTheLimit(expand bool) string {
	var b strings.Builder
	for i := 0; i < maxParallelInstances/maxParallel; i++ {
		if expand {
			fmt.Fprintf(&b, "j%d: {script: x, variables: {G: g}, parallel: {matrix: [{A: %s, B: %s}]}}\n", i, seq(10), seq(20))
		} else {
			fmt.Fprintf(&b, "j%d: {script: x, variables: {G: g, A: %s, B: %s}}\n", i, seq(10), seq(20))
		}
	}
	return b.String()
}

// It parses in bounded memory; BenchmarkParallelAtTheLimit gives its time.
func TestParallelAtTheLimit(t *testing.T) {
	if err := parseBounded(t, parallelAtTheLimit(true), maxWork, 256<<20); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkParallelAtTheLimit against BenchmarkParallelBaseline (the
// same jobs, their values in a list, without parallel; the file is then
// invalid, refused once read) is the cost of expanding 20,000 instances.
func BenchmarkParallelAtTheLimit(b *testing.B) {
	src := []byte(parallelAtTheLimit(true))
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParallelBaseline(b *testing.B) {
	src := []byte(parallelAtTheLimit(false))
	for b.Loop() {
		if _, err := Parse(src); err == nil {
			b.Fatal("accepted")
		}
	}
}

// Every job of the largest pipeline with a resource group of the longest
// key stays within the parse's work and memory bounds.
func TestResourceGroupsAtTheLimit(t *testing.T) {
	var b strings.Builder
	group := strings.Repeat("g", MaxResourceGroupKey)
	for i := range 2000 {
		fmt.Fprintf(&b, "j%d: {script: x, resource_group: %s%d}\n", i, group[:MaxResourceGroupKey-4], i)
	}
	if err := parseBounded(t, b.String(), maxWork, 256<<20); err != nil {
		t.Fatal(err)
	}
}
