package internal

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/commitstatus"
)

// Status is a commit status posted by CI systems.
type Status struct {
	ID           uint64     `json:"id"`
	ProjectID    uint64     `json:"project_id"`
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

func (s *Status) RecordID() uint64      { return s.ID }
func (s *Status) SetRecordID(id uint64) { s.ID = id }

// stageName is the stage a status belongs to for ?stage=: a CI job's own,
// else "external", GitLab's stage of statuses posted through the API.
func (s *Status) stageName() string {
	if s.Stage == "" {
		return "external"
	}
	return s.Stage
}

func statusCommitKey(project uint64, sha string) string {
	return strconv.FormatUint(project, 10) + "/" + sha
}

func statusKey(s *Status) string {
	ref := ""
	if s.Ref != nil {
		ref = *s.Ref
	}
	return statusCommitKey(s.ProjectID, s.SHA) + "/" + s.Name + "\x00" + ref
}

var statuses = store.NewTable[uint64, Status]("repository.statuses",
	store.Index[Status]{Name: "commit", Keys: func(s *Status) []string { return []string{statusCommitKey(s.ProjectID, s.SHA)} }},
	store.Index[Status]{Name: "key", Unique: true, Keys: func(s *Status) []string { return []string{statusKey(s)} }},
	store.Index[Status]{Name: "project", Keys: func(s *Status) []string { return []string{strconv.FormatUint(s.ProjectID, 10)} }},
)

// removeProject deletes a deleted project's statuses and commit comments.
func (st *Statuses) removeProject(ctx context.Context, project int64) error {
	key := strconv.FormatInt(project, 10)
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
	return []interface{ Buckets() []string }{statuses, protections, releases, releaseLinks, comments, refJournal}
}

// Statuses serves commit statuses.
type Statuses struct {
	db     *store.DB
	bus    *events.Bus
	reader *Reader
	users  identity.Users
}

var validStates = map[string]bool{"pending": true, "running": true, "success": true, "failed": true, "canceled": true}

// StatusView is the spec's commit status.
type StatusView struct {
	ID           uint64             `json:"id"`
	SHA          string             `json:"sha"`
	Ref          *string            `json:"ref"`
	Status       string             `json:"status"`
	Name         string             `json:"name"`
	TargetURL    *string            `json:"target_url"`
	Description  *string            `json:"description"`
	Coverage     *float64           `json:"coverage"`
	AllowFailure bool               `json:"allow_failure"`
	CreatedAt    api.Time           `json:"created_at"`
	StartedAt    *api.Time          `json:"started_at"`
	FinishedAt   *api.Time          `json:"finished_at"`
	Author       identity.BasicUser `json:"author"`
}

// author is the public view of the user who posted a status or comment; a
// deleted user's statuses and comments stay, shown as the ghost user.
func (st *Statuses) author(ctx context.Context, id int64) (identity.BasicUser, error) {
	base := api.ExternalURLFrom(ctx)
	u, err := st.users.UserByID(ctx, id)
	switch {
	case errors.Is(err, auth.ErrUserNotFound):
		return identity.GhostUser(base, id), nil
	case err != nil:
		return identity.BasicUser{}, err
	}
	return identity.NewBasicUser(base, u), nil
}

func (st *Statuses) view(ctx context.Context, s *Status) (StatusView, error) {
	v := StatusView{ID: s.ID, SHA: s.SHA, Ref: s.Ref, Status: s.State, Name: s.Name, TargetURL: s.TargetURL,
		Description: s.Description, Coverage: s.Coverage, AllowFailure: s.AllowFailure, CreatedAt: api.NewTime(s.CreatedAt)}
	if s.StartedAt != nil {
		v.StartedAt = api.TimePtr(*s.StartedAt)
	}
	if s.FinishedAt != nil {
		v.FinishedAt = api.TimePtr(*s.FinishedAt)
	}
	var err error
	v.Author, err = st.author(ctx, s.AuthorID)
	return v, err
}

type postStatusInput struct {
	ProjectPath
	SHA  string `path:"sha"`
	Body struct {
		State       string   `json:"state" required:"true" enum:"pending,running,success,failed,canceled"`
		Ref         *string  `json:"ref,omitempty"`
		Name        *string  `json:"name,omitempty"`
		Context     *string  `json:"context,omitempty"`
		TargetURL   *string  `json:"target_url,omitempty"`
		Description *string  `json:"description,omitempty"`
		Coverage    *float64 `json:"coverage,omitempty"`
	}
}

func (st *Statuses) post(ctx context.Context, in *postStatusInput) (*struct{ Body *StatusView }, error) {
	info, err := st.reader.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	sha, err := st.reader.store.commitHash(info.ID, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	name := "default"
	switch {
	case in.Body.Name != nil && strings.TrimSpace(*in.Body.Name) != "":
		name = strings.TrimSpace(*in.Body.Name)
	case in.Body.Context != nil && strings.TrimSpace(*in.Body.Context) != "":
		name = strings.TrimSpace(*in.Body.Context)
	}
	if len(name) > 255 {
		return nil, api.FieldErrors{"name": {"is too long (maximum is 255 characters)"}}
	}
	if in.Body.TargetURL != nil && *in.Body.TargetURL != "" && !strings.HasPrefix(*in.Body.TargetURL, "http://") && !strings.HasPrefix(*in.Body.TargetURL, "https://") {
		return nil, api.FieldErrors{"target_url": {"must be a valid URL"}}
	}
	now := time.Now().UTC()
	pr := auth.FromContext(ctx)
	probe := &Status{ProjectID: uint64(info.ID), SHA: sha.String(), Ref: in.Body.Ref, Name: name}
	var saved *Status
	err = st.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		saved, err = upsertStatus(tx, *probe, now, func(s *Status) {
			s.State, s.AuthorID = in.Body.State, pr.UserID()
			if in.Body.TargetURL != nil {
				s.TargetURL = in.Body.TargetURL
			}
			if in.Body.Description != nil {
				s.Description = in.Body.Description
			}
			if in.Body.Coverage != nil {
				s.Coverage = in.Body.Coverage
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
	v, err := st.view(ctx, saved)
	if err != nil {
		return nil, err
	}
	return &struct{ Body *StatusView }{Body: &v}, nil
}

type listStatusesInput struct {
	ProjectPath
	api.PageParams
	SHA   string `path:"sha"`
	Ref   string `query:"ref"`
	Stage string `query:"stage"`
	Name  string `query:"name"`
	All   bool   `query:"all" doc:"All statuses, not only the latest of each name and ref"`
}

type statusesOutput struct {
	api.PageHeaders
	Body []StatusView
}

// forCommit loads a commit's statuses, newest first.
func (st *Statuses) forCommit(ctx context.Context, project uint64, sha string) ([]*Status, error) {
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

func (st *Statuses) list(ctx context.Context, in *listStatusesInput) (*statusesOutput, error) {
	info, repo, err := st.reader.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, ErrCommitNotFound
	}
	all, err := st.forCommit(ctx, uint64(info.ID), c.Hash.String())
	if err != nil {
		return nil, err
	}
	// One status is kept per (name, ref), updated in place: "all" and
	// "latest" are the same list here, newest first.
	var matching []*Status
	for _, s := range all {
		if in.Ref != "" && (s.Ref == nil || *s.Ref != in.Ref) {
			continue
		}
		if in.Name != "" && s.Name != in.Name {
			continue
		}
		if in.Stage != "" && s.stageName() != in.Stage {
			continue
		}
		matching = append(matching, s)
	}
	sort.SliceStable(matching, func(i, j int) bool { return matching[i].ID > matching[j].ID })
	out := &statusesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(matching)), Body: []StatusView{}}
	for _, s := range api.Window(matching, in.PageParams) {
		v, err := st.view(ctx, s)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

// combined is a commit's overall status from its statuses: failed beats
// running beats pending beats canceled beats success; nil when none.
func combined(list []*Status) *string {
	if len(list) == 0 {
		return nil
	}
	// CI's jobs add skipped, created and manual (see Set): a skipped job
	// changes nothing, the others count as waiting.
	rank := map[string]int{"skipped": 0, "success": 1, "canceled": 2, "manual": 3, "created": 3, "pending": 3, "running": 4, "failed": 5}
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

func (st *Statuses) register(a *api.API) {
	st.registerComments(a)
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "post-commit-status", Method: http.MethodPost, Path: "/projects/{id}/statuses/{sha}", Tags: tags,
		Summary: "Add or update a commit status (by sha, name and ref)", Access: api.SignedIn}, st.post)
	api.Register(a, api.Op{ID: "list-commit-statuses", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/statuses", Tags: tags,
		Summary: "A commit's statuses, newest first", Access: api.Public}, st.list)
}

// Set implements commitstatus.Recorder: CI's jobs as statuses of their
// commits, upserted like a posted status (joining the caller's
// transaction when its context carries one).
func (st *Statuses) Set(ctx context.Context, in commitstatus.Status) error {
	ref := in.Ref
	probe := Status{ProjectID: uint64(in.ProjectID), SHA: in.SHA, Ref: &ref, Name: in.Name}
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
