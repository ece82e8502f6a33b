package cistatus

import "testing"

func jobs(statuses ...Status) []JobState {
	out := make([]JobState, len(statuses))
	for i, s := range statuses {
		out[i] = JobState{Status: s}
	}
	return out
}

func allowed(s Status) JobState { return JobState{Status: s, AllowFailure: true} }

func TestComposite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		jobs []JobState
		want Status
	}{
		{"no jobs at all is NULL", nil, StatusNone},

		{"rule 1: all skipped with an allowed failure", []JobState{{Status: StatusSkipped}, allowed(StatusFailed)}, StatusSuccess},
		{"rule 1: only an allowed cancel", []JobState{allowed(StatusCanceled)}, StatusSuccess},
		{"rule 1: only allowed failures", []JobState{allowed(StatusFailed), allowed(StatusFailed)}, StatusSuccess},

		{"rule 2: all skipped", jobs(StatusSkipped, StatusSkipped), StatusSkipped},
		{"rule 2: only optional manual jobs count as all skipped", []JobState{allowed(StatusManual)}, StatusSkipped},

		{"rule 3: all success", jobs(StatusSuccess, StatusSuccess), StatusSuccess},
		{"rule 3: success beside an optional manual job", []JobState{{Status: StatusSuccess}, allowed(StatusManual)}, StatusSuccess},
		{"rule 3: success beside an allowed failure", []JobState{{Status: StatusSuccess}, allowed(StatusFailed)}, StatusSuccess},

		{"rule 4: all created", jobs(StatusCreated, StatusCreated), StatusCreated},
		{"rule 4: created beside an optional manual job", []JobState{{Status: StatusCreated}, allowed(StatusManual)}, StatusCreated},

		{"rule 5: success and skipped", jobs(StatusSuccess, StatusSkipped), StatusSuccess},

		{"rule 6: success, skipped and canceled", jobs(StatusSuccess, StatusSkipped, StatusCanceled), StatusCanceled},
		{"rule 6: all canceled", jobs(StatusCanceled, StatusCanceled), StatusCanceled},
		{"rule 6: success and canceled", jobs(StatusSuccess, StatusCanceled), StatusCanceled},

		{"rule 7: created and pending", jobs(StatusCreated, StatusPending), StatusPending},
		{"waiting_for_resource alone", jobs(StatusWaitingForResource), StatusWaitingForResource},
		{"scheduled alone", jobs(StatusScheduled), StatusScheduled},
		{"scheduled beside success", jobs(StatusSuccess, StatusScheduled), StatusScheduled},
		{"scheduled under manual", jobs(StatusManual, StatusScheduled), StatusManual},
		{"scheduled under a running job", jobs(StatusRunning, StatusScheduled), StatusRunning},
		{"waiting_for_resource beside success and manual", jobs(StatusSuccess, StatusWaitingForResource, StatusManual), StatusWaitingForResource},
		{"waiting_for_resource under a running job", jobs(StatusRunning, StatusWaitingForResource), StatusRunning},
		{"rule 7: all pending", jobs(StatusPending), StatusPending},
		{"rule 7: skipped and pending", jobs(StatusSkipped, StatusPending), StatusPending},

		{"rule 8: running", jobs(StatusRunning), StatusRunning},
		{"rule 8: success and pending", jobs(StatusSuccess, StatusPending), StatusRunning},
		{"rule 8: failed and running", jobs(StatusFailed, StatusRunning), StatusRunning},
		{"rule 8: running beats a blocking manual job", jobs(StatusManual, StatusRunning), StatusRunning},

		{"rule 9: a blocking manual job", jobs(StatusSuccess, StatusManual), StatusManual},
		{"rule 9: a blocking manual job beside a failure", jobs(StatusFailed, StatusManual), StatusManual},
		{"rule 9: manual beats created", jobs(StatusManual, StatusCreated), StatusManual},

		{"rule 10: success and created", jobs(StatusSuccess, StatusCreated), StatusRunning},
		{"rule 10: failed and created", jobs(StatusFailed, StatusCreated), StatusRunning},

		{"rule 11: a failure", jobs(StatusSuccess, StatusFailed), StatusFailed},
		{"rule 11: failed and canceled", jobs(StatusFailed, StatusCanceled), StatusFailed},
		{"rule 11: failed and skipped", jobs(StatusFailed, StatusSkipped), StatusFailed},
		{"rule 11: a failure that is not allowed beside one that is", []JobState{{Status: StatusFailed}, allowed(StatusFailed)}, StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Composite(tt.jobs); got != tt.want {
				t.Errorf("Composite(%v) = %q, want %q", tt.jobs, got, tt.want)
			}
		})
	}
}

// An allowed-to-fail job counts like any other while it has not failed.
func TestCompositeAllowFailureCountsUntilItFails(t *testing.T) {
	t.Parallel()
	for _, s := range []Status{StatusCreated, StatusPending, StatusRunning, StatusSuccess, StatusSkipped} {
		withFlag := Composite([]JobState{{Status: StatusSuccess}, allowed(s)})
		without := Composite(jobs(StatusSuccess, s))
		if withFlag != without {
			t.Errorf("status %s: allow_failure changed the composite from %q to %q", s, without, withFlag)
		}
	}
}

func TestTransition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from Status
		ev   Event
		want Status // StatusNone: refused
	}{
		{StatusCreated, EventEnqueue, StatusPending},
		{StatusSkipped, EventEnqueue, StatusPending},
		{StatusManual, EventEnqueue, StatusPending},
		{StatusRunning, EventEnqueue, StatusNone},
		{StatusCreated, EventActionize, StatusManual},
		{StatusPending, EventActionize, StatusNone},
		{StatusManual, EventPlay, StatusPending},
		{StatusCreated, EventPlay, StatusNone},
		{StatusSuccess, EventPlay, StatusNone},
		{StatusPending, EventRun, StatusRunning},
		{StatusCreated, EventRun, StatusNone},
		{StatusCanceled, EventRun, StatusNone},
		{StatusRunning, EventSucceed, StatusSuccess},
		{StatusCanceled, EventSucceed, StatusNone},
		{StatusFailed, EventSucceed, StatusNone},
		{StatusRunning, EventDrop, StatusFailed},
		{StatusPending, EventDrop, StatusFailed},
		{StatusSuccess, EventDrop, StatusNone},
		{StatusCreated, EventSkip, StatusSkipped},
		{StatusPending, EventSkip, StatusSkipped},
		{StatusRunning, EventSkip, StatusNone},
		{StatusCreated, EventCancel, StatusCanceled},
		{StatusPending, EventCancel, StatusCanceled},
		{StatusRunning, EventCancel, StatusCanceled},
		{StatusManual, EventCancel, StatusCanceled},
		{StatusSuccess, EventCancel, StatusNone},
		{StatusSkipped, EventProcess, StatusCreated},
		{StatusManual, EventProcess, StatusCreated},
		{StatusFailed, EventProcess, StatusNone},
		{StatusCreated, Event("explode"), StatusNone},
	}
	for _, tt := range tests {
		got, err := Transition(tt.from, tt.ev)
		if tt.want == StatusNone {
			if err == nil {
				t.Errorf("%s on %s = %s, want refused", tt.ev, tt.from, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s on %s = %s, %v; want %s", tt.ev, tt.from, got, err, tt.want)
		}
	}
}

func TestStatusPredicates(t *testing.T) {
	t.Parallel()
	for _, s := range Statuses {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
		if s.Cancelable() {
			if _, err := Transition(s, EventCancel); err != nil {
				t.Errorf("%s is cancelable but the cancel event refuses it", s)
			}
		}
	}
	if Status("bogus").Valid() || StatusNone.Valid() {
		t.Error("unknown statuses reported valid")
	}
	if !StatusRunning.Active() || StatusCreated.Active() {
		t.Error("Active wrong")
	}
	if !StatusCanceled.Retryable() || StatusRunning.Retryable() {
		t.Error("Retryable wrong")
	}
}
