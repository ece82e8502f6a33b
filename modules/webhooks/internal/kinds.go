package internal

// What fires a hook: the triggers (a hook's switch, its X-Gitlab-Event and
// how the test endpoint builds a sample) and the event handlers that turn
// an event into a payload for them. A new kind of hook is one line in
// triggers, one handler in Subscribers and its payload builder.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	cievent "github.com/fennec-forge/fennec/modules/ci/event"
	noteevent "github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/identity"
	issueevent "github.com/fennec-forge/fennec/modules/issues/event"
	mrevent "github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// trigger is one switch of a project hook.
type trigger struct {
	Name  string // the hook's field and the test endpoint's :trigger
	Event string // X-Gitlab-Event
	Wants func(h *projects.Hook) bool
	// Sample builds the test endpoint's payload from the project's latest
	// object of the kind; errNoSample when it has none.
	Sample func(s *Service, ctx context.Context, projectID, userID int64) (any, error)
}

var triggers = []trigger{
	{"push_events", "Push Hook", func(h *projects.Hook) bool { return h.PushEvents }, (*Service).pushSample},
	{"tag_push_events", "Tag Push Hook", func(h *projects.Hook) bool { return h.TagPushEvents }, (*Service).tagPushSample},
	{"issues_events", "Issue Hook", func(h *projects.Hook) bool { return h.IssuesEvents }, (*Service).issueSample},
	{"note_events", "Note Hook", func(h *projects.Hook) bool { return h.NoteEvents }, (*Service).noteSample},
	{"merge_requests_events", "Merge Request Hook", func(h *projects.Hook) bool { return h.MergeRequestsEvents }, (*Service).mergeRequestSample},
	{"job_events", "Job Hook", func(h *projects.Hook) bool { return h.JobEvents }, (*Service).jobSample},
	{"pipeline_events", "Pipeline Hook", func(h *projects.Hook) bool { return h.PipelineEvents }, (*Service).pipelineSample},
}

func triggerNamed(name string) (trigger, bool) {
	i := slices.IndexFunc(triggers, func(t trigger) bool { return t.Name == name })
	if i < 0 {
		return trigger{}, false
	}
	return triggers[i], true
}

// systemHookEvent is the X-Gitlab-Event of every system hook delivery.
const systemHookEvent = "System Hook"

// payload is what an event gives the hooks: the body for the project's
// hooks with trigger, and for the system hooks that want systemTrigger
// ("" for none, "all" for every system hook). Bodies are built only when
// a hook wants them.
type payload struct {
	projectID     int64
	trigger       string
	body          func() (any, error)
	systemTrigger string
	systemBody    func() (any, error)
}

// Subscribers are the module's event handlers. Each runs in the bus's
// transaction (SubscribeInTx): the deliveries it enqueues commit with the
// event's acknowledgement, so an event is enqueued once, and none is lost.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		hookKind(s, "webhooks.push", s.onPush),
		hookKind(s, "webhooks.issue", s.onIssue),
		// Only comments fire note hooks: the others are never stored for us.
		events.Only(hookKind(s, "webhooks.note", s.onNote), func(ev noteevent.NoteEvent) bool {
			return ev.Action == noteevent.NoteCreated && !ev.System
		}),
		hookKind(s, "webhooks.commit-comment", s.onCommitComment),
		hookKind(s, "webhooks.merge-request", s.onMergeRequest),
		hookKind(s, "webhooks.job", s.onJob),
		hookKind(s, "webhooks.pipeline", s.onPipeline),
		events.Only(hookKind(s, "webhooks.project", s.onProject), func(ev projects.ProjectEvent) bool {
			switch ev.Action {
			case projects.ProjectCreated, projects.ProjectForked, projects.ProjectUpdated, projects.ProjectDeleted:
				return true
			}
			return false
		}),
		hookKind(s, "webhooks.user-created", s.onUserCreated),
		hookKind(s, "webhooks.user-deleted", s.onUserDeleted),
	}
}

// hookKind subscribes build to E's topic and enqueues what it returns.
func hookKind[E events.Event](s *Service, name string, build func(ctx context.Context, ev E) (payload, error)) events.Subscriber {
	return events.SubscribeInTx(name, func(ctx context.Context, ev E) error {
		p, err := build(ctx, ev)
		if err != nil {
			return err
		}
		return s.enqueue(ctx, p)
	})
}

// enqueue adds one delivery per interested hook to the queue, in the
// transaction ctx carries; the hooks' workers are woken once it commits.
func (s *Service) enqueue(ctx context.Context, p payload) error {
	if p.trigger == "" && p.systemTrigger == "" {
		return nil
	}
	var hooks []projects.Hook
	if p.trigger != "" && p.projectID != 0 {
		all, err := s.hooks.ProjectHooks(ctx, p.projectID)
		if err != nil {
			return err
		}
		t, _ := triggerNamed(p.trigger)
		for i := range all {
			if t.Wants != nil && t.Wants(&all[i]) {
				hooks = append(hooks, all[i])
			}
		}
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		if len(hooks) > 0 {
			body, err := marshal(p.body)
			if gone(err) {
				return nil // deleted before its event came: its hooks went with it
			}
			if err != nil {
				return err
			}
			t, _ := triggerNamed(p.trigger)
			for _, h := range hooks {
				d := &Delivery{Hook: hookKey(false, h.ID), HookID: h.ID, ProjectID: p.projectID,
					Trigger: p.trigger, Event: t.Event, Body: body, CreatedAt: now}
				if err := s.push(tx, d); err != nil {
					return err
				}
			}
		}
		if p.systemTrigger != "" {
			var sys []*SystemHook
			err := systemHooks.Scan(tx, false, 0, func(h *SystemHook) (bool, error) {
				if p.systemTrigger == "all" || (p.systemTrigger == "push_events" && h.PushEvents) ||
					(p.systemTrigger == "tag_push_events" && h.TagPushEvents) {
					sys = append(sys, h)
				}
				return true, nil
			})
			if err != nil {
				return err
			}
			if len(sys) > 0 {
				body, err := marshal(p.systemBody)
				if gone(err) {
					return nil // a push to a project deleted since: nothing to say of it
				}
				if err != nil {
					return err
				}
				for _, h := range sys {
					d := &Delivery{Hook: hookKey(true, h.ID), HookID: h.ID, System: true, ProjectID: p.projectID,
						Trigger: p.systemTrigger, Event: systemHookEvent, Body: body, CreatedAt: now}
					if err := s.push(tx, d); err != nil {
						return err
					}
				}
			}
		}
		return nil // the queue wakes its workers after the commit
	})
}

func marshal(build func() (any, error)) (json.RawMessage, error) {
	v, err := build()
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// gone says whether err is a project that no longer exists: its event
// comes too late for any hook (they went with it).
func gone(err error) bool { return errors.Is(err, projects.ErrNotFound) }

// --- the handlers ---

func (s *Service) onPush(ctx context.Context, ev repository.PushEvent) (payload, error) {
	trig := "push_events"
	if ev.ObjectKind == repository.TagPush {
		trig = "tag_push_events"
	}
	var built map[string]any
	build := func() (map[string]any, error) {
		if built != nil {
			return built, nil
		}
		var err error
		built, err = s.pushBody(ctx, ev)
		return built, err
	}
	return payload{projectID: ev.ProjectID, trigger: trig, systemTrigger: trig,
		body: func() (any, error) { return build() },
		systemBody: func() (any, error) {
			b, err := build()
			if err != nil {
				return nil, err
			}
			sys := make(map[string]any, len(b)+1)
			for k, v := range b {
				sys[k] = v
			}
			sys["event_name"] = b["object_kind"]
			return sys, nil
		}}, nil
}

// The facts each kind keeps (see Fact).
type (
	issueFact        = issueevent.Issue
	mergeRequestFact = mrevent.MergeRequest
	// noteFact is a comment: a note, or a comment on a commit (NoteableType
	// "Commit", CommitID its commit; NoteID the comment's own id).
	noteFact struct {
		noteevent.NoteEvent
		CommitID string `json:"commit_id,omitempty"`
	}
	jobFact struct {
		cievent.JobEvent
		CreatedAt time.Time `json:"created_at"`
	}
	pipelineFact struct {
		cievent.PipelineEvent
		StartedAt *time.Time `json:"started_at,omitempty"`
	}
)

func (s *Service) onIssue(ctx context.Context, ev issueevent.IssueEvent) (payload, error) {
	is := ev.Issue
	if is.ProjectID == 0 {
		is.ProjectID = ev.ProjectID
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		return putFact(tx, "issue", is.ID, is.ProjectID, 0, is, s.now())
	})
	if err != nil {
		return payload{}, err
	}
	return payload{projectID: is.ProjectID, trigger: "issues_events",
		body: func() (any, error) { return s.issueBody(ctx, ev.UserID, string(ev.Action), is) }}, nil
}

func (s *Service) onMergeRequest(ctx context.Context, ev mrevent.MergeRequestEvent) (payload, error) {
	mr := ev.MergeRequest
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		return putFact(tx, "merge_request", mr.ID, ev.ProjectID, 0, mr, s.now())
	})
	if err != nil {
		return payload{}, err
	}
	return payload{projectID: ev.ProjectID, trigger: "merge_requests_events",
		body: func() (any, error) { return s.mergeRequestBody(ctx, ev.UserID, string(ev.Action), mr) }}, nil
}

func (s *Service) onNote(ctx context.Context, ev noteevent.NoteEvent) (payload, error) {
	// GitLab 9.x fired note hooks for comments as they were made; system
	// notes (status changes, cross-references) and edits fired none.
	if ev.Action != noteevent.NoteCreated || ev.System {
		return payload{}, nil
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		// Only the project's latest comment is kept (the test endpoint's
		// sample): notes are many, and no payload needs an older one.
		return putFact(tx, "note", ev.ProjectID, ev.ProjectID, 0, noteFact{NoteEvent: ev}, s.now())
	})
	if err != nil {
		return payload{}, err
	}
	return payload{projectID: ev.ProjectID, trigger: "note_events",
		body: func() (any, error) { return s.noteBodyFor(ctx, noteFact{NoteEvent: ev}) }}, nil
}

// onCommitComment: a comment on a commit fires the Note Hook, as GitLab's
// commit notes did (noteable_type "Commit", with the commit).
func (s *Service) onCommitComment(ctx context.Context, ev repository.CommitCommented) (payload, error) {
	n := noteFact{NoteEvent: noteevent.NoteEvent{Action: noteevent.NoteCreated, NoteID: ev.CommentID, Body: ev.Note,
		ProjectID: ev.ProjectID, NoteableType: "Commit", AuthorID: ev.AuthorID, CreatedAt: ev.CreatedAt, UpdatedAt: ev.CreatedAt},
		CommitID: ev.SHA}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		return putFact(tx, "note", ev.ProjectID, ev.ProjectID, 0, n, s.now())
	})
	if err != nil {
		return payload{}, err
	}
	return payload{projectID: ev.ProjectID, trigger: "note_events",
		body: func() (any, error) { return s.noteBodyFor(ctx, n) }}, nil
}

// noteBodyFor finds the note's noteable among the facts and builds the body.
func (s *Service) noteBodyFor(ctx context.Context, n noteFact) (any, error) {
	var issue *issueFact
	var mr *mergeRequestFact
	err := s.db.View(ctx, func(tx *store.Tx) error {
		switch n.NoteableType {
		case "Issue":
			var f issueFact
			if ok, err := getFact(tx, "issue", n.NoteableID, &f); err != nil || !ok {
				return err
			}
			issue = &f
		case "MergeRequest":
			var f mergeRequestFact
			if ok, err := getFact(tx, "merge_request", n.NoteableID, &f); err != nil || !ok {
				return err
			}
			mr = &f
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.noteBody(ctx, n, issue, mr)
}

func (s *Service) onJob(ctx context.Context, ev cievent.JobEvent) (payload, error) {
	var pl *pipelineFact
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		f := jobFact{JobEvent: ev, CreatedAt: s.now().UTC()}
		var old jobFact
		if ok, err := getFact(tx, "job", ev.JobID, &old); err != nil {
			return err
		} else if ok && !old.CreatedAt.IsZero() {
			f.CreatedAt = old.CreatedAt
		}
		var p pipelineFact
		if ok, err := getFact(tx, "pipeline", ev.PipelineID, &p); err != nil {
			return err
		} else if ok {
			pl = &p
		}
		return putFact(tx, "job", ev.JobID, ev.ProjectID, ev.PipelineID, f, s.now())
	})
	if err != nil {
		return payload{}, err
	}
	return payload{projectID: ev.ProjectID, trigger: "job_events",
		body: func() (any, error) { return s.jobBody(ctx, jobFact{JobEvent: ev}, pl) }}, nil
}

func (s *Service) onPipeline(ctx context.Context, ev cievent.PipelineEvent) (payload, error) {
	var jobs []jobFact
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		f := pipelineFact{PipelineEvent: ev}
		var old pipelineFact
		if ok, err := getFact(tx, "pipeline", ev.PipelineID, &old); err != nil {
			return err
		} else if ok && old.StartedAt != nil {
			f.StartedAt = old.StartedAt
		}
		if f.StartedAt == nil && ev.Status != "pending" && ev.Status != "created" {
			now := s.now().UTC()
			f.StartedAt = &now
		}
		if err := putFact(tx, "pipeline", ev.PipelineID, ev.ProjectID, 0, f, s.now()); err != nil {
			return err
		}
		ids, err := facts.IDsBy(tx, "pipeline", strconv.FormatInt(ev.PipelineID, 10))
		if err != nil {
			return err
		}
		for _, id := range ids {
			row, err := facts.Get(tx, id)
			if err != nil {
				return err
			}
			var j jobFact
			if err := json.Unmarshal(row.Data, &j); err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	if err != nil {
		return payload{}, err
	}
	slices.SortFunc(jobs, func(a, b jobFact) int { return int(a.JobID - b.JobID) })
	return payload{projectID: ev.ProjectID, trigger: "pipeline_events",
		body: func() (any, error) { return s.pipelineBody(ctx, pipelineFact{PipelineEvent: ev}, jobs) }}, nil
}

// --- system events: projects and users ---

// projectSummary is what project_create and project_destroy say of a
// project; kept as a fact so that project_destroy can say it of a project
// that is gone.
type projectSummary struct {
	Name              string    `json:"name"`
	Path              string    `json:"path"`
	PathWithNamespace string    `json:"path_with_namespace"`
	OwnerName         string    `json:"owner_name"`
	OwnerEmail        string    `json:"owner_email"`
	Visibility        string    `json:"project_visibility"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

func (s *Service) summarize(ctx context.Context, projectID int64) (projectSummary, error) {
	p, err := s.projectData(ctx, projectID)
	if err != nil {
		return projectSummary{}, err
	}
	now := s.now().UTC()
	sum := projectSummary{Name: p.info.Name, Path: p.info.Path, PathWithNamespace: p.info.PathWithNamespace,
		OwnerName: p.namespace, Visibility: p.info.Visibility, CreatedAt: now, UpdatedAt: now}
	// A personal project's owner is its namespace's user; a group's has
	// no e-mail (GitLab sent "").
	if u, err := s.users.UserByUsername(ctx, p.namespaceP); err == nil {
		sum.OwnerName, sum.OwnerEmail = u.Name, u.Email
	} else if !errors.Is(err, identity.ErrUserNotFound) {
		return projectSummary{}, err
	}
	return sum, nil
}

func (s *Service) onProject(ctx context.Context, ev projects.ProjectEvent) (payload, error) {
	switch ev.Action {
	case projects.ProjectCreated, projects.ProjectForked, projects.ProjectUpdated:
		sum, err := s.summarize(ctx, ev.ProjectID)
		if gone(err) {
			return payload{}, nil
		}
		if err != nil {
			return payload{}, err
		}
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			var old projectSummary
			if ok, err := getFact(tx, "project", ev.ProjectID, &old); err != nil {
				return err
			} else if ok {
				sum.CreatedAt = old.CreatedAt
			}
			return putFact(tx, "project", ev.ProjectID, 0, 0, sum, s.now())
		})
		if err != nil || ev.Action == projects.ProjectUpdated {
			return payload{}, err
		}
		return payload{systemTrigger: "all", systemBody: func() (any, error) {
			return projectEventBody("project_create", ev.ProjectID, sum), nil
		}}, nil
	case projects.ProjectDeleted:
		var sum projectSummary
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			if _, err := getFact(tx, "project", ev.ProjectID, &sum); err != nil {
				return err
			}
			// The project's facts go with it; its hooks went already, and
			// their queues go as their workers find them gone.
			if f, err := facts.GetBy(tx, "ref", factRef("project", ev.ProjectID)); err == nil {
				if err := facts.Delete(tx, f.ID); err != nil {
					return err
				}
			}
			_, err := facts.DeleteBy(tx, "project", strconv.FormatInt(ev.ProjectID, 10))
			return err
		})
		if err != nil {
			return payload{}, err
		}
		sum.UpdatedAt = s.now().UTC()
		return payload{systemTrigger: "all", systemBody: func() (any, error) {
			return projectEventBody("project_destroy", ev.ProjectID, sum), nil
		}}, nil
	}
	return payload{}, nil
}

func projectEventBody(name string, id int64, sum projectSummary) map[string]any {
	return map[string]any{
		"event_name": name, "created_at": xmlTime(sum.CreatedAt), "updated_at": xmlTime(sum.UpdatedAt),
		"name": sum.Name, "path": sum.Path, "path_with_namespace": sum.PathWithNamespace, "project_id": id,
		"owner_name": sum.OwnerName, "owner_email": sum.OwnerEmail, "project_visibility": sum.Visibility,
	}
}

func (s *Service) onUserCreated(ctx context.Context, ev identity.UserCreated) (payload, error) {
	now := s.now().UTC()
	return payload{systemTrigger: "all", systemBody: func() (any, error) {
		return userEventBody("user_create", ev.UserID, ev.Username, ev.Name, ev.Email, now), nil
	}}, nil
}

func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) (payload, error) {
	now := s.now().UTC()
	return payload{systemTrigger: "all", systemBody: func() (any, error) {
		return userEventBody("user_destroy", ev.UserID, ev.Username, ev.Name, ev.Email, now), nil
	}}, nil
}

func userEventBody(name string, id int64, username, fullName, email string, at time.Time) map[string]any {
	return map[string]any{
		"event_name": name, "created_at": xmlTime(at), "updated_at": xmlTime(at),
		"name": fullName, "email": email, "user_id": id, "username": username,
	}
}

// xmlTime is Ruby's Time#xmlschema, as system hooks sent created_at.
func xmlTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
