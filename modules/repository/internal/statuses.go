package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/commitstatus"
)

// Status is a commit status posted by CI systems.
type Status struct {
	ID           int64      `json:"id"`
	ProjectID    int64      `json:"project_id"`
	SHA          string     `json:"sha"`
	Ref          *string    `json:"ref"`
	Name         string     `json:"name"`
	Stage        string     `json:"stage,omitempty"` // empty: a status posted through the API (stageName)
	State        string     `json:"state"`
	TargetURL    *string    `json:"target_url"`
	Description  *string    `json:"description"`
	Coverage     *float64   `json:"coverage"`
	AllowFailure bool       `json:"allow_failure"`
	AuthorID     int64      `json:"author_id"`
	CreatedAt    time.Time  `json:"created_at"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`
}

func (s *Status) RecordID() int64      { return s.ID }
func (s *Status) SetRecordID(id int64) { s.ID = id }

// stageName is the stage a status belongs to for ?stage=: a CI job's own,
// else "external", GitLab's stage of statuses posted through the API.
func (s *Status) stageName() string {
	if s.Stage == "" {
		return "external"
	}
	return s.Stage
}

func statusCommitKey(project int64, sha string) string {
	return store.IDString(project) + "/" + sha
}

func statusKey(s *Status) string {
	ref := ""
	if s.Ref != nil {
		ref = *s.Ref
	}
	return statusCommitKey(s.ProjectID, s.SHA) + "/" + s.Name + "\x00" + ref
}

var statuses = store.NewTable[int64, Status]("repository.statuses",
	store.Index[Status]{Name: "commit", Keys: func(s *Status) []string { return []string{statusCommitKey(s.ProjectID, s.SHA)} }},
	store.Index[Status]{Name: "key", Unique: true, Keys: func(s *Status) []string { return []string{statusKey(s)} }},
	store.Index[Status]{Name: "project", Keys: func(s *Status) []string { return []string{store.IDString(s.ProjectID)} }},
)

// removeProject deletes a deleted project's statuses and commit comments.
func (st *Statuses) removeProject(ctx context.Context, project int64) error {
	key := store.IDString(project)
	// removeStep rows per transaction: CI records a status per job, and a
	// project's many thousands removed in one kept every other writer
	// waiting for seconds. The caller's event is delivered again until
	// this returns nil, and each call goes on from what is left.
	return st.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := statuses.FirstIDsBy(tx, "project", key, removeStep)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if err := statuses.Delete(tx, id); err != nil {
				return false, err
			}
		}
		if len(ids) == removeStep {
			return false, nil
		}
		budget := removeStep - len(ids)
		ids, err = comments.FirstIDsBy(tx, "project", key, budget)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if err := comments.Delete(tx, id); err != nil {
				return false, err
			}
		}
		return len(ids) < budget, nil
	})
}

// removeStep is how many rows one transaction of removeProject removes.
const removeStep = 500

// Tables lists the module's tables.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{statuses, protections, releases, releaseLinks, comments, refJournal, writtenRepos,
		workqueue.Declared(pushEventsQueue), workqueue.Declared(housekeepingQueue)}
}

// Statuses serves commit statuses.
type Statuses struct {
	db     *store.DB
	bus    *events.Bus
	reader *Reader
	users  identity.Users
}

var validStates = map[string]bool{"pending": true, "running": true, "success": true, "failed": true, "canceled": true}

// forCommit loads a commit's statuses, newest first.
func (st *Statuses) forCommit(ctx context.Context, project int64, sha string) ([]*Status, error) {
	var out []*Status
	err := st.db.View(ctx, func(tx *store.Tx) error {
		ids, err := statuses.IDsBy(tx, "commit", statusCommitKey(project, sha))
		if err != nil {
			return err
		}
		for i := len(ids) - 1; i >= 0; i-- {
			s, err := statuses.Get(tx, ids[i])
			if err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// combined is a commit's overall status from its statuses: failed beats
// running beats pending beats canceled beats success; nil when none.
func combined(list []*Status) *string {
	if len(list) == 0 {
		return nil
	}
	// CI's jobs add skipped, created, manual and waiting_for_resource
	// (see Set): a skipped job changes nothing, the others count as waiting.
	rank := map[string]int{"skipped": 0, "success": 1, "canceled": 2, "manual": 3, "created": 3, "pending": 3,
		"waiting_for_resource": 3, "running": 4, "failed": 5}
	best := ""
	for _, s := range list {
		if s.State == "failed" && s.AllowFailure {
			continue
		}
		if rank[s.State] > rank[best] {
			best = s.State
		}
	}
	if best == "" {
		best = "success"
	}
	return &best
}

// NewStatuses registers the commit status operations.
func NewStatuses(db *store.DB, bus *events.Bus, rd *Reader, users identity.Users) *Statuses {
	return &Statuses{db: db, bus: bus, reader: rd, users: users}
}

// Set implements commitstatus.Recorder: CI's jobs as statuses of their
// commits, upserted like a posted status (joining the caller's
// transaction when its context carries one).
func (st *Statuses) Set(ctx context.Context, in commitstatus.Status) error {
	ref := in.Ref
	probe := Status{ProjectID: in.ProjectID, SHA: in.SHA, Ref: &ref, Name: in.Name}
	return st.db.Update(ctx, func(tx *store.Tx) error {
		_, err := upsertStatus(tx, probe, time.Now().UTC(), func(s *Status) {
			s.State, s.AuthorID, s.AllowFailure, s.Coverage = in.State, in.AuthorID, in.AllowFailure, in.Coverage
			s.Stage = in.Stage
			s.StartedAt, s.FinishedAt = in.StartedAt, in.FinishedAt
			s.TargetURL, s.Description = nil, nil
			if in.TargetURL != "" {
				u := in.TargetURL
				s.TargetURL = &u
			}
			if in.Description != "" {
				d := in.Description
				s.Description = &d
			}
		})
		return err
	})
}

// upsertStatus adds the status that probe names (project, sha, name and
// ref), created at now, or updates the stored one; change sets its fields.
// The probe is copied, so a write function run again starts afresh.
func upsertStatus(tx *store.Tx, probe Status, now time.Time, change func(*Status)) (*Status, error) {
	s, err := statuses.GetBy(tx, "key", statusKey(&probe))
	fresh := errors.Is(err, store.ErrNotFound)
	if err != nil && !fresh {
		return nil, err
	}
	if fresh {
		s = &probe
		s.CreatedAt = now
	}
	change(s)
	if fresh {
		return s, statuses.Insert(tx, s)
	}
	return s, statuses.Update(tx, s)
}

// statusFields is what a posted status gives: its state, ref, name (or
// context; "default" when both are blank), link, text and coverage.
type statusFields struct {
	State       string
	Ref         *string
	Name        *string
	Context     *string
	TargetURL   *string
	Description *string
	Coverage    *float64
}

// Post adds or updates the status of commit sha named by its name and
// ref, as the caller in ctx, who must be able to push.
func (st *Statuses) Post(ctx context.Context, project, sha string, f statusFields) (*Status, error) {
	info, err := st.reader.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return nil, err
	}
	hash, err := st.reader.store.commitHash(info.ID, sha, info.DefaultBranch)
	if err != nil || sha == "" {
		return nil, ErrCommitNotFound
	}
	name := "default"
	switch {
	case f.Name != nil && strings.TrimSpace(*f.Name) != "":
		name = strings.TrimSpace(*f.Name)
	case f.Context != nil && strings.TrimSpace(*f.Context) != "":
		name = strings.TrimSpace(*f.Context)
	}
	if len(name) > 255 {
		return nil, fieldsInvalid("name", "is too long (maximum is 255 characters)")
	}
	if f.TargetURL != nil && *f.TargetURL != "" && !strings.HasPrefix(*f.TargetURL, "http://") && !strings.HasPrefix(*f.TargetURL, "https://") {
		return nil, fieldsInvalid("target_url", "must be a valid URL")
	}
	now := time.Now().UTC()
	pr := auth.FromContext(ctx)
	probe := &Status{ProjectID: info.ID, SHA: hash.String(), Ref: f.Ref, Name: name}
	var saved *Status
	err = st.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		saved, err = upsertStatus(tx, *probe, now, func(s *Status) {
			s.State, s.AuthorID = f.State, pr.UserID()
			if f.TargetURL != nil {
				s.TargetURL = f.TargetURL
			}
			if f.Description != nil {
				s.Description = f.Description
			}
			if f.Coverage != nil {
				s.Coverage = f.Coverage
			}
			switch s.State {
			case "running":
				if s.StartedAt == nil {
					s.StartedAt = &now
				}
				s.FinishedAt = nil
			case "success", "failed", "canceled":
				s.FinishedAt = &now
			case "pending":
				s.StartedAt, s.FinishedAt = nil, nil
			}
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return saved, nil
}
