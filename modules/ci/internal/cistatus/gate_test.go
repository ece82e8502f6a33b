package cistatus

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"
)

func TestGate(t *testing.T) {
	t.Parallel()
	W, P, M, S := DecisionWait, DecisionPending, DecisionManual, DecisionSkipped
	// One row per prior composite status; columns on_success, on_failure,
	// always, manual.
	tests := []struct {
		prior Status
		want  [4]Decision
	}{
		{StatusNone, [4]Decision{P, S, P, M}}, // first stage: no prior jobs counts as success
		{StatusSuccess, [4]Decision{P, S, P, M}},
		{StatusSkipped, [4]Decision{P, S, P, M}},
		{StatusFailed, [4]Decision{S, P, P, S}},
		{StatusCanceled, [4]Decision{S, S, S, S}},
		{StatusManual, [4]Decision{W, W, W, W}}, // a blocking manual job holds later stages
		{StatusCreated, [4]Decision{W, W, W, W}},
		{StatusPending, [4]Decision{W, W, W, W}},
		{StatusRunning, [4]Decision{W, W, W, W}},
	}
	whens := []When{WhenOnSuccess, WhenOnFailure, WhenAlways, WhenManual}
	for _, tt := range tests {
		for i, w := range whens {
			if got := Gate(tt.prior, w); got != tt.want[i] {
				t.Errorf("Gate(%q, %s) = %s, want %s", tt.prior, w, got, tt.want[i])
			}
		}
	}
	if got := Gate(StatusSuccess, When("delayed")); got != DecisionSkipped {
		t.Errorf("an unknown when = %s, want skipped", got)
	}
}

func TestProcess(t *testing.T) {
	t.Parallel()
	type j = StagedJob
	tests := []struct {
		name string
		jobs []StagedJob
		want []Change
	}{
		{
			name: "a new pipeline queues its first stage only",
			jobs: []j{{0, StatusCreated, false, WhenOnSuccess}, {0, StatusCreated, false, WhenOnSuccess}, {1, StatusCreated, false, WhenOnSuccess}},
			want: []Change{{0, StatusPending}, {1, StatusPending}},
		},
		{
			name: "a finished stage lets the next one go",
			jobs: []j{{0, StatusSuccess, false, WhenOnSuccess}, {1, StatusCreated, false, WhenOnSuccess}, {1, StatusCreated, false, WhenOnFailure}},
			want: []Change{{1, StatusPending}, {2, StatusSkipped}},
		},
		{
			name: "a failure skips on_success and runs on_failure and always",
			jobs: []j{{0, StatusFailed, false, WhenOnSuccess}, {1, StatusCreated, false, WhenOnSuccess}, {1, StatusCreated, false, WhenOnFailure}, {1, StatusCreated, false, WhenAlways}},
			want: []Change{{1, StatusSkipped}, {2, StatusPending}, {3, StatusPending}},
		},
		{
			name: "an allowed failure counts as success",
			jobs: []j{{0, StatusFailed, true, WhenOnSuccess}, {1, StatusCreated, false, WhenOnSuccess}},
			want: []Change{{1, StatusPending}},
		},
		{
			name: "a stage entirely skipped lets the next be decided in the same pass",
			jobs: []j{{0, StatusSuccess, false, WhenOnSuccess}, {1, StatusCreated, false, WhenOnFailure}, {2, StatusCreated, false, WhenOnSuccess}},
			want: []Change{{1, StatusSkipped}, {2, StatusPending}},
		},
		{
			name: "an optional manual job does not hold the next stage",
			jobs: []j{{0, StatusCreated, true, WhenManual}, {1, StatusCreated, false, WhenOnSuccess}},
			want: []Change{{0, StatusManual}, {1, StatusPending}},
		},
		{
			name: "a blocking manual job holds the next stage",
			jobs: []j{{0, StatusCreated, false, WhenManual}, {1, StatusCreated, false, WhenOnSuccess}},
			want: []Change{{0, StatusManual}},
		},
		{
			name: "a running stage holds the next",
			jobs: []j{{0, StatusRunning, false, WhenOnSuccess}, {1, StatusCreated, false, WhenAlways}},
			want: nil,
		},
		{
			name: "a canceled stage skips everything after it",
			jobs: []j{{0, StatusCanceled, false, WhenOnSuccess}, {1, StatusCreated, false, WhenAlways}, {2, StatusCreated, false, WhenOnFailure}},
			want: []Change{{1, StatusSkipped}, {2, StatusSkipped}},
		},
		{
			name: "stage indexes need not be contiguous nor sorted",
			jobs: []j{{5, StatusCreated, false, WhenOnSuccess}, {2, StatusCreated, false, WhenOnSuccess}},
			want: []Change{{1, StatusPending}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Process(tt.jobs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Process = %v, want %v", got, tt.want)
			}
		})
	}
}

// processNaive is Process written the obvious way, recomputing the prior
// composite from scratch for each stage: the reference Process must match.
func processNaive(jobs []StagedJob) []Change {
	current := make([]JobState, len(jobs))
	for i, j := range jobs {
		current[i] = JobState{Status: j.Status, AllowFailure: j.AllowFailure}
	}
	var stages []int
	seen := map[int]bool{}
	for _, j := range jobs {
		if !seen[j.StageIndex] {
			seen[j.StageIndex] = true
			stages = append(stages, j.StageIndex)
		}
	}
	sort.Ints(stages)
	var changes []Change
	for _, stage := range stages {
		var prior []JobState
		for i, j := range jobs {
			if j.StageIndex < stage {
				prior = append(prior, current[i])
			}
		}
		ps := Composite(prior)
		for i, j := range jobs {
			if j.StageIndex == stage && current[i].Status == StatusCreated {
				if d := Gate(ps, j.When); d != DecisionWait {
					current[i].Status = d.Status()
					changes = append(changes, Change{i, d.Status()})
				}
			}
		}
	}
	return changes
}

func TestProcessMatchesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	whens := []When{WhenOnSuccess, WhenOnFailure, WhenAlways, WhenManual}
	for round := 0; round < 5000; round++ {
		jobs := make([]StagedJob, rng.IntN(8))
		for i := range jobs {
			status := StatusCreated
			if rng.IntN(2) == 0 {
				status = Statuses[rng.IntN(len(Statuses))]
			}
			jobs[i] = StagedJob{StageIndex: rng.IntN(4), Status: status, AllowFailure: rng.IntN(3) == 0, When: whens[rng.IntN(len(whens))]}
		}
		if got, want := Process(jobs), processNaive(jobs); !reflect.DeepEqual(got, want) {
			t.Fatalf("Process(%+v)\n= %v\nreference %v", jobs, got, want)
		}
	}
}

// Many stages cost no more than many jobs.
func TestProcessManyStages(t *testing.T) {
	t.Parallel()
	jobs := make([]StagedJob, 100_000)
	for i := range jobs {
		jobs[i] = StagedJob{StageIndex: i, Status: StatusCreated, When: WhenOnFailure}
	}
	start := time.Now()
	changes := Process(jobs)
	if len(changes) != len(jobs) || time.Since(start) > 5*time.Second {
		t.Errorf("%d changes in %v", len(changes), time.Since(start))
	}
}
