package cistatus

import "fmt"

// Event moves a job from one status to another. The events and the statuses
// each accepts are GitLab 9.x's job state machine; anything else is refused,
// so a stale or racing update cannot, say, turn a canceled job into success.
type Event string

// Job events.
const (
	// EventEnqueue makes a job runnable: created, skipped or manual -> pending.
	EventEnqueue Event = "enqueue"
	// EventActionize parks a manual job for a user to play: created -> manual.
	EventActionize Event = "actionize"
	// EventPlay starts a manual job: manual -> pending.
	EventPlay Event = "play"
	// EventRun is an executor taking the job: pending -> running.
	EventRun Event = "run"
	// EventSucceed: created, pending or running -> success.
	EventSucceed Event = "succeed"
	// EventDrop fails the job: created, pending or running -> failed.
	EventDrop Event = "drop"
	// EventSkip: created or pending -> skipped (its `when` was not met).
	EventSkip Event = "skip"
	// EventCancel: created, pending, running, manual,
	// waiting_for_resource or scheduled -> canceled.
	EventCancel Event = "cancel"
	// EventProcess puts a skipped or manual job back to created so that
	// gating decides it again (a pipeline retry does this).
	EventProcess Event = "process"
)

// transitions maps each event to the statuses it accepts and the status it
// leads to.
var transitions = map[Event]struct {
	from []Status
	to   Status
}{
	EventEnqueue:   {[]Status{StatusCreated, StatusSkipped, StatusManual}, StatusPending},
	EventActionize: {[]Status{StatusCreated}, StatusManual},
	EventPlay:      {[]Status{StatusManual}, StatusPending},
	EventRun:       {[]Status{StatusPending}, StatusRunning},
	EventSucceed:   {[]Status{StatusCreated, StatusPending, StatusRunning}, StatusSuccess},
	EventDrop:      {[]Status{StatusCreated, StatusPending, StatusRunning}, StatusFailed},
	EventSkip:      {[]Status{StatusCreated, StatusPending}, StatusSkipped},
	EventCancel:    {[]Status{StatusCreated, StatusPending, StatusRunning, StatusManual, StatusWaitingForResource, StatusScheduled}, StatusCanceled},
	EventProcess:   {[]Status{StatusSkipped, StatusManual}, StatusCreated},
}

// TransitionError says that an event does not apply to a job's status.
type TransitionError struct {
	From  Status
	Event Event
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("cistatus: cannot %s a job that is %s", e.Event, e.From)
}

// Transition returns the status a job in status from reaches through event
// ev, or a *TransitionError when the event does not apply.
func Transition(from Status, ev Event) (Status, error) {
	t, ok := transitions[ev]
	if !ok {
		return from, &TransitionError{From: from, Event: ev}
	}
	for _, s := range t.from {
		if s == from {
			return t.to, nil
		}
	}
	return from, &TransitionError{From: from, Event: ev}
}
