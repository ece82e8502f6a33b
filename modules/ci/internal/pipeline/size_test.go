package pipeline

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A pipeline keeps the stages its jobs use, in order, and its jobs'
// StageIndex counts among them; the limit counts the pipeline's jobs.
func TestForPipeline(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("stages: [")
	for i := range 1000 {
		fmt.Fprintf(&b, "s%d, ", i)
	}
	b.WriteString("last]\n")
	b.WriteString("a: {stage: s3, script: x}\nb: {stage: last, script: x}\nc: {stage: s3, script: x}\n")
	b.WriteString("t: {stage: s7, script: x, only: [tags]}\n")
	cfg, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	branch := RefInfo{Name: "master"}
	stages, jobs, err := cfg.ForPipeline(branch, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stages, []string{"s3", "last"}) {
		t.Errorf("stages = %v", stages)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%s:%s:%d", j.Name, j.Stage, j.StageIndex))
	}
	if want := []string{"a:s3:0", "b:last:1", "c:s3:0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("jobs = %v, want %v", got, want)
	}
	if cfg.Jobs[1].StageIndex != 1000 {
		t.Errorf("the configuration's own job changed: %+v", cfg.Jobs[1])
	}
	// Dependencies still resolve in the pipeline's terms.
	if deps := jobs[1].DependenciesIn(jobs); !reflect.DeepEqual(deps, []string{"a", "c"}) {
		t.Errorf("dependencies of b = %v", deps)
	}
	tag := RefInfo{Name: "v1", IsTag: true}
	_, _, err = cfg.ForPipeline(tag, 3)
	var ce *ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) ||
		err.Error() != "jobs config holds 4 jobs for this pipeline, more than the limit of 3" {
		t.Errorf("a tag's 4 jobs with a limit of 3: %v", err)
	}
	if stages, jobs, err := cfg.ForPipeline(RefInfo{Name: "x", IsTag: true}, 4); err != nil || len(jobs) != 4 || len(stages) != 3 {
		t.Errorf("at the limit: %v %d %v", stages, len(jobs), err)
	}
}

// .pre and .post jobs run around a pipeline's other stages, but make no
// pipeline by themselves.
func TestForPipelinePredefinedStages(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "pre: {stage: .pre, script: x}\npost: {stage: .post, script: x}\nbuild: {stage: build, script: x, only: [main]}\n")
	stages, jobs, err := cfg.ForPipeline(RefInfo{Name: "main", Source: SourcePush}, 10)
	if err != nil || strings.Join(stages, " ") != ".pre build .post" || len(jobs) != 3 || jobs[1].StageIndex != 2 || jobs[2].StageIndex != 1 {
		t.Errorf("main: %v %+v %v", stages, jobs, err)
	}
	stages, jobs, err = cfg.ForPipeline(RefInfo{Name: "topic", Source: SourcePush}, 10)
	if err != nil || stages != nil || jobs != nil {
		t.Errorf("topic: %v %+v %v", stages, jobs, err)
	}
}
