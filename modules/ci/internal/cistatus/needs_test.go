package cistatus

import "testing"

func TestGateNeeds(t *testing.T) {
	t.Parallel()
	W, P, M, S := DecisionWait, DecisionPending, DecisionManual, DecisionSkipped
	ok := JobState{Status: StatusSuccess}
	// Columns: on_success, on_failure, always, manual.
	tests := []struct {
		name  string
		needs []JobState
		want  [4]Decision
	}{
		{"needs: []", nil, [4]Decision{P, S, P, M}},
		{"all succeeded", []JobState{ok, ok}, [4]Decision{P, S, P, M}},
		{"one still running", []JobState{ok, {Status: StatusRunning}}, [4]Decision{W, W, W, W}},
		{"one not decided yet", []JobState{ok, {Status: StatusCreated}}, [4]Decision{W, W, W, W}},
		{"one failed", []JobState{ok, {Status: StatusFailed}}, [4]Decision{S, P, P, S}},
		{"one failed while another runs", []JobState{{Status: StatusFailed}, {Status: StatusRunning}}, [4]Decision{W, W, W, W}},
		{"an allowed failure", []JobState{ok, {Status: StatusFailed, AllowFailure: true}}, [4]Decision{P, S, P, M}},
		{"one canceled", []JobState{ok, {Status: StatusCanceled}}, [4]Decision{S, S, S, S}},
		{"one skipped", []JobState{ok, {Status: StatusSkipped}}, [4]Decision{S, S, P, S}},
		{"skipped while another runs", []JobState{{Status: StatusSkipped}, {Status: StatusRunning}}, [4]Decision{S, S, W, S}},
		{"an optional manual job", []JobState{ok, {Status: StatusManual, AllowFailure: true}}, [4]Decision{S, S, P, S}},
		{"a blocking manual job", []JobState{ok, {Status: StatusManual}}, [4]Decision{W, W, W, W}},
	}
	whens := []When{WhenOnSuccess, WhenOnFailure, WhenAlways, WhenManual}
	for _, tt := range tests {
		for i, w := range whens {
			if got := GateNeeds(tt.needs, w); got != tt.want[i] {
				t.Errorf("%s: GateNeeds(%s) = %s, want %s", tt.name, w, got, tt.want[i])
			}
		}
	}
}
