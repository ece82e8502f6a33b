package internal

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
)

// hookKey names a hook in the queue and the log: "p<id>" for a project
// hook, "s<id>" for a system hook (the two kinds have ids of their own).
func hookKey(system bool, id int64) string {
	if system {
		return "s" + strconv.FormatInt(id, 10)
	}
	return "p" + strconv.FormatInt(id, 10)
}

// Delivery is a payload waiting in the deliveries queue to be sent to one
// hook: a job of core/workqueue keyed by the hook's key, so a hook's
// deliveries go in the order their events were committed. A job leaves the
// queue when it is delivered or given up.
type Delivery struct {
	Hook      string          `json:"hook"` // hookKey, the job's key
	HookID    int64           `json:"hook_id"`
	System    bool            `json:"system,omitempty"`
	ProjectID int64           `json:"project_id,omitempty"`
	Trigger   string          `json:"trigger"` // push_events...
	Event     string          `json:"event"`   // X-Gitlab-Event
	Body      json.RawMessage `json:"body"`
	CreatedAt time.Time       `json:"created_at"`
}

// deliveriesQueue names the module's work queue.
const deliveriesQueue = "webhooks.deliveries"

// push adds d to its hook's queue, in tx.
func (s *Service) push(tx *store.Tx, d *Delivery) error {
	payload, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return s.queue.Enqueue(tx, d.Hook, payload)
}

// drop empties hook's queue (the hook is gone).
func (s *Service) drop(tx *store.Tx, hook string) error {
	return s.queue.DropKey(tx, hook)
}

// queuedHooks are the hooks with queued deliveries.
func queuedHooks(tx *store.Tx) []string {
	keys, _ := workqueue.KeysIn(tx, deliveriesQueue)
	return keys
}

// oldDelivery is a row of the queue before the deliveries queue
// (webhooks.queue, with webhooks.queue_order), which migration 1 moves.
type oldDelivery struct {
	ID int64 `json:"id"`
	Delivery
	Attempts int       `json:"attempts"`
	NextTry  time.Time `json:"next_try"`
}

func (d *oldDelivery) RecordID() int64      { return d.ID }
func (d *oldDelivery) SetRecordID(id int64) { d.ID = id }

var oldQueue = store.NewTable[int64, oldDelivery]("webhooks.queue")

// oldQueueOrder indexed the old queue by hook.
const oldQueueOrder = "webhooks.queue_order"

// Migrations are the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{
		{Module: "webhooks", Version: 1, Name: "deliveries move to the core work queue", Up: moveQueue},
	}
}

// moveQueue moves the deliveries an older version left queued into the
// deliveries queue, in id order (so each hook's order holds), with their
// attempts and next try, and removes the old buckets.
func moveQueue(tx *store.Tx) error {
	if store.Keys(oldQueue.Name()).Exists(tx) {
		var rows []*oldDelivery
		if err := oldQueue.Scan(tx, false, 0, func(d *oldDelivery) (bool, error) {
			rows = append(rows, d)
			return true, nil
		}); err != nil {
			return err
		}
		for _, d := range rows {
			payload, err := json.Marshal(&d.Delivery)
			if err != nil {
				return err
			}
			err = workqueue.EnqueueIn(tx, deliveriesQueue, workqueue.Item{Key: d.Hook, Payload: payload,
				Attempts: d.Attempts, NextTry: d.NextTry, EnqueuedAt: d.CreatedAt})
			if err != nil {
				return err
			}
			if err := oldQueue.Delete(tx, d.ID); err != nil {
				return err
			}
		}
	}
	for _, name := range append(oldQueue.Buckets(), oldQueueOrder) {
		if err := store.Keys(name).Drop(tx); err != nil {
			return err
		}
	}
	return nil
}

// LogEntry is one attempt at a delivery, as the delivery log shows it.
// Ids grow with time, so the oldest entries are the lowest ids.
type LogEntry struct {
	ID              int64             `json:"id"`
	Hook            string            `json:"hook"`
	HookID          int64             `json:"hook_id"`
	System          bool              `json:"system,omitempty"`
	ProjectID       int64             `json:"project_id,omitempty"`
	Trigger         string            `json:"trigger"`
	Event           string            `json:"event"`
	URL             string            `json:"url"` // without credentials
	RequestHeaders  map[string]string `json:"request_headers"`
	RequestBody     json.RawMessage   `json:"request_body"`
	ResponseStatus  int               `json:"response_status,omitempty"`
	ResponseHeaders map[string]string `json:"response_headers,omitempty"`
	ResponseBody    string            `json:"response_body,omitempty"`
	Duration        time.Duration     `json:"duration"`
	Attempt         int               `json:"attempt"`
	Error           string            `json:"error,omitempty"`
	// Outcome: "delivered", "retrying", "failed" (given up) or "refused"
	// (the destination is not allowed; never retried).
	Outcome   string    `json:"outcome"`
	CreatedAt time.Time `json:"created_at"`
}

func (e *LogEntry) RecordID() int64      { return e.ID }
func (e *LogEntry) SetRecordID(id int64) { e.ID = id }

var deliveryLog = store.NewTable[int64, LogEntry]("webhooks.log",
	store.Index[LogEntry]{Name: "hook", Keys: func(e *LogEntry) []string { return []string{e.Hook} }},
)

// SystemHook is a hook an administrator added with POST /hooks.
type SystemHook struct {
	ID                    int64     `json:"id"`
	URL                   string    `json:"url"`
	Token                 string    `json:"token,omitempty"` // sealed (purposeSystemHookToken)
	PushEvents            bool      `json:"push_events"`
	TagPushEvents         bool      `json:"tag_push_events"`
	EnableSSLVerification bool      `json:"enable_ssl_verification"`
	CreatedAt             time.Time `json:"created_at"`
}

func (h *SystemHook) RecordID() int64      { return h.ID }
func (h *SystemHook) SetRecordID(id int64) { h.ID = id }

var systemHooks = store.NewTable[int64, SystemHook]("webhooks.system_hooks")

// Fact is what a payload needs of an object that its own event does not
// carry: the last known issue or merge request (a note's payload embeds
// its noteable), job (a pipeline's builds) and pipeline (a job's commit
// status), project (project_destroy names a project that is gone) and user
// (user_destroy). Each is recorded from its own events, by kind and id.
type Fact struct {
	ID         int64           `json:"id"`
	Ref        string          `json:"ref"` // kind:id
	ProjectID  int64           `json:"project_id,omitempty"`
	PipelineID int64           `json:"pipeline_id,omitempty"`
	Data       json.RawMessage `json:"data"`
	CreatedAt  time.Time       `json:"created_at"`
}

func (f *Fact) RecordID() int64      { return f.ID }
func (f *Fact) SetRecordID(id int64) { f.ID = id }

var facts = store.NewTable[int64, Fact]("webhooks.facts",
	store.Index[Fact]{Name: "ref", Unique: true, Keys: func(f *Fact) []string { return []string{f.Ref} }},
	store.Index[Fact]{Name: "project", Keys: func(f *Fact) []string {
		if f.ProjectID == 0 {
			return nil
		}
		return []string{strconv.FormatInt(f.ProjectID, 10)}
	}},
	store.Index[Fact]{Name: "pipeline", Keys: func(f *Fact) []string {
		if f.PipelineID == 0 {
			return nil
		}
		return []string{strconv.FormatInt(f.PipelineID, 10)}
	}},
)

func factRef(kind string, id int64) string { return kind + ":" + strconv.FormatInt(id, 10) }

// putFact records (or replaces) what is known of kind:id.
func putFact(tx *store.Tx, kind string, id, projectID, pipelineID int64, v any, now time.Time) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ref := factRef(kind, id)
	f, err := facts.GetBy(tx, "ref", ref)
	switch {
	case err == nil:
		f.Data, f.ProjectID, f.PipelineID = data, projectID, pipelineID
		return facts.Update(tx, f)
	case errors.Is(err, store.ErrNotFound):
		return facts.Insert(tx, &Fact{Ref: ref, ProjectID: projectID, PipelineID: pipelineID, Data: data, CreatedAt: now})
	}
	return err
}

// getFact decodes what is known of kind:id into v; false when nothing is.
func getFact(tx *store.Tx, kind string, id int64, v any) (bool, error) {
	f, err := facts.GetBy(tx, "ref", factRef(kind, id))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(f.Data, v)
}

// Tables are the module's tables.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{workqueue.Declared(deliveriesQueue), deliveryLog, systemHooks, facts}
}
