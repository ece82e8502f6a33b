package internal

// The payloads of GitLab 9.x's hooks (GITLAB-FACTS section 6), built from
// the events and what the module recorded (facts). Timestamps of model
// attributes are Ruby's Time#to_s ("2017-05-24 10:14:38 UTC"), as 9.x sent
// them through Sidekiq; commit timestamps keep their offset.

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	cievent "github.com/fennec-forge/fennec/modules/ci/event"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// system is ctx with the server as principal, for reads without a caller.
func system(ctx context.Context) context.Context { return auth.WithPrincipal(ctx, auth.System()) }

// rubyTime formats t as 9.x's payloads did; nil for a zero time.
func rubyTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func rubyTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return rubyTime(*t)
}

func idOrNil(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func strOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// visibilityLevel is the integer 9.x's payloads carry.
func visibilityLevel(v string) int {
	switch v {
	case "public":
		return 20
	case "internal":
		return 10
	}
	return 0
}

// projectData is what payloads say of a project.
type projectData struct {
	info       projects.ProjectInfo
	web        string
	httpURL    string
	sshURL     string
	namespace  string // the namespace's name
	namespaceP string // its path
}

func (s *Service) projectData(ctx context.Context, id int64) (projectData, error) {
	info, err := s.access.ResolveID(system(ctx), id)
	if err != nil {
		return projectData{}, err
	}
	base := s.url()
	host := base
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	p := projectData{info: info, web: base + "/" + info.PathWithNamespace}
	p.httpURL = p.web + ".git"
	p.sshURL = "git@" + host + ":" + info.PathWithNamespace + ".git"
	p.namespace = info.NameWithNamespace
	if i := strings.LastIndex(info.NameWithNamespace, " / "); i >= 0 {
		p.namespace = info.NameWithNamespace[:i]
	}
	p.namespaceP = info.PathWithNamespace
	if i := strings.LastIndex(info.PathWithNamespace, "/"); i >= 0 {
		p.namespaceP = info.PathWithNamespace[:i]
	}
	return p, nil
}

// hookAttrs is the project object of payloads (Project#hook_attrs).
func (p projectData) hookAttrs() map[string]any {
	return map[string]any{
		"id": p.info.ID, "name": p.info.Name, "description": p.info.Description, "web_url": p.web,
		"avatar_url": nil, "git_ssh_url": p.sshURL, "git_http_url": p.httpURL, "namespace": p.namespace,
		"visibility_level": visibilityLevel(p.info.Visibility), "path_with_namespace": p.info.PathWithNamespace,
		"default_branch": p.info.DefaultBranch, "homepage": p.web, "url": p.sshURL, "ssh_url": p.sshURL, "http_url": p.httpURL,
	}
}

// repository is the deprecated repository object of issue, merge request
// and note payloads.
func (p projectData) repository() map[string]any {
	return map[string]any{"name": p.info.Name, "url": p.sshURL, "description": p.info.Description, "homepage": p.web}
}

// fullRepository is the repository object of push and job payloads.
func (p projectData) fullRepository() map[string]any {
	r := p.repository()
	r["git_http_url"], r["git_ssh_url"], r["visibility_level"] = p.httpURL, p.sshURL, visibilityLevel(p.info.Visibility)
	return r
}

// userData is a user as payloads show one; a deleted user is the ghost.
func (s *Service) userData(ctx context.Context, id int64) (identity.UserInfo, identity.BasicUser) {
	base := s.url()
	u, err := s.users.UserByID(ctx, id)
	if err != nil {
		g := identity.GhostUser(base, id)
		return identity.UserInfo{ID: id, Name: g.Name, Username: g.Username}, g
	}
	return u, identity.NewBasicUser(base, u)
}

// hookUser is {name, username, avatar_url}.
func (s *Service) hookUser(ctx context.Context, id int64) map[string]any {
	_, b := s.userData(ctx, id)
	return map[string]any{"name": b.Name, "username": b.Username, "avatar_url": b.AvatarURL}
}

// commitData is a commit of the project's repository, read from git.
type commitData struct {
	ID, Message, AuthorName, AuthorEmail string
	When                                 time.Time
}

func (s *Service) commit(ctx context.Context, projectID int64, sha string) (commitData, bool) {
	if sha == "" {
		return commitData{}, false
	}
	c, err := s.repos.Commit(auth.WithPrincipal(ctx, auth.System()), projectID, sha)
	if err != nil {
		return commitData{}, false
	}
	return commitData{ID: c.ID, Message: c.Message, AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, When: c.Author.When}, true
}

// hookCommit is {id, message, timestamp, url, author{name, email}}.
func (p projectData) hookCommit(c commitData) map[string]any {
	return map[string]any{
		"id": c.ID, "message": c.Message, "timestamp": c.When.Format(time.RFC3339),
		"url":    p.web + "/commit/" + c.ID,
		"author": map[string]any{"name": c.AuthorName, "email": c.AuthorEmail},
	}
}

// --- push and tag push ---

// pushBody is the Push Hook or Tag Push Hook payload of ev.
func (s *Service) pushBody(ctx context.Context, ev repository.PushEvent) (map[string]any, error) {
	p, err := s.projectData(ctx, ev.ProjectID)
	if err != nil {
		return nil, err
	}
	u, b := s.userData(ctx, ev.UserID)
	var checkout, message any
	if !ev.Deleted() {
		checkout = ev.After
		if ev.ObjectKind == repository.TagPush {
			// An annotated tag: its message, and the commit it points to.
			if tag, err := s.repos.AnnotatedTag(auth.WithPrincipal(ctx, auth.System()), ev.ProjectID, ev.After); err == nil {
				message = tag.Message
				if tag.CommitID != "" {
					checkout = tag.CommitID
				}
			}
		}
	}
	commits := make([]map[string]any, 0, len(ev.Commits))
	for _, c := range ev.Commits {
		commits = append(commits, map[string]any{
			"id": c.ID, "message": c.Message, "timestamp": c.Timestamp, "url": c.URL,
			"author": map[string]any{"name": c.Author.Name, "email": c.Author.Email},
			"added":  nonNil(c.Added), "modified": nonNil(c.Modified), "removed": nonNil(c.Removed),
		})
	}
	return map[string]any{
		"object_kind": string(ev.ObjectKind), "before": ev.Before, "after": ev.After, "ref": ev.Ref,
		"checkout_sha": checkout, "message": message,
		"user_id": ev.UserID, "user_name": u.Name, "user_email": u.Email, "user_avatar": b.AvatarURL,
		"project_id": ev.ProjectID, "project": p.hookAttrs(), "commits": commits,
		"total_commits_count": ev.TotalCommitsCount, "repository": p.fullRepository(),
	}, nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// --- issues ---

func (s *Service) issueAttrs(ctx context.Context, is issueFact) map[string]any {
	var first any
	if len(is.AssigneeIDs) > 0 {
		first = is.AssigneeIDs[0]
	}
	return map[string]any{
		"id": is.ID, "iid": is.IID, "title": is.Title, "description": is.Description, "state": is.State,
		"project_id": is.ProjectID, "author_id": is.AuthorID, "assignee_ids": nonNilIDs(is.AssigneeIDs), "assignee_id": first,
		"milestone_id": idOrNil(is.MilestoneID), "created_at": rubyTime(is.CreatedAt), "updated_at": rubyTime(is.UpdatedAt),
		"confidential": is.Confidential, "due_date": strOrNil(is.DueDate), "url": is.URL,
	}
}

func nonNilIDs(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

func labelObjects(names []string) []map[string]any {
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]any{"title": n})
	}
	return out
}

// issueBody is the Issue Hook payload.
func (s *Service) issueBody(ctx context.Context, userID int64, action string, is issueFact) (map[string]any, error) {
	p, err := s.projectData(ctx, is.ProjectID)
	if err != nil {
		return nil, err
	}
	attrs := s.issueAttrs(ctx, is)
	attrs["action"] = action
	body := map[string]any{
		"object_kind": "issue", "user": s.hookUser(ctx, userID), "project": p.hookAttrs(), "repository": p.repository(),
		"object_attributes": attrs, "labels": labelObjects(is.Labels),
	}
	assignees := make([]map[string]any, 0, len(is.AssigneeIDs))
	for _, id := range is.AssigneeIDs {
		assignees = append(assignees, s.hookUser(ctx, id))
	}
	body["assignees"] = assignees
	if len(assignees) > 0 {
		body["assignee"] = assignees[0]
	}
	return body, nil
}

// --- merge requests ---

// mergeRequestAttrs is a merge request's object_attributes; known is a
// project the caller has read already, used when it is the source or the
// target (it mostly is both) instead of reading it again.
func (s *Service) mergeRequestAttrs(ctx context.Context, mr mergeRequestFact, known projectData) (map[string]any, error) {
	tgt := known
	if tgt.info.ID != mr.TargetProjectID {
		var err error
		if tgt, err = s.projectData(ctx, mr.TargetProjectID); err != nil {
			return nil, err
		}
	}
	src := tgt
	if mr.SourceProjectID != mr.TargetProjectID {
		var err error
		src, err = s.projectData(ctx, mr.SourceProjectID)
		if err != nil && !errors.Is(err, projects.ErrNotFound) {
			return nil, err
		}
	}
	var source any
	if src.info.ID != 0 {
		source = src.hookAttrs()
	}
	var last any
	if mr.LastCommit != nil {
		last = tgt.hookCommit(commitData{ID: mr.LastCommit.ID, Message: mr.LastCommit.Message,
			AuthorName: mr.LastCommit.AuthorName, AuthorEmail: mr.LastCommit.AuthorEmail, When: mr.LastCommit.Timestamp})
		if src.info.ID != 0 {
			last.(map[string]any)["url"] = src.web + "/commit/" + mr.LastCommit.ID
		}
	}
	return map[string]any{
		"id": mr.ID, "iid": mr.IID, "target_branch": mr.TargetBranch, "source_branch": mr.SourceBranch,
		"source_project_id": mr.SourceProjectID, "target_project_id": mr.TargetProjectID, "author_id": mr.AuthorID,
		"assignee_id": idOrNil(mr.AssigneeID), "title": mr.Title, "description": mr.Description, "state": mr.State,
		"merge_status": mr.MergeStatus, "created_at": rubyTime(mr.CreatedAt), "updated_at": rubyTime(mr.UpdatedAt),
		"milestone_id": idOrNil(mr.MilestoneID), "merge_commit_sha": strOrNil(mr.MergeCommitSHA),
		"source": source, "target": tgt.hookAttrs(), "last_commit": last, "work_in_progress": mr.WorkInProgress, "url": mr.URL,
	}, nil
}

// mergeRequestBody is the Merge Request Hook payload.
func (s *Service) mergeRequestBody(ctx context.Context, userID int64, action string, mr mergeRequestFact) (map[string]any, error) {
	p, err := s.projectData(ctx, mr.TargetProjectID)
	if err != nil {
		return nil, err
	}
	attrs, err := s.mergeRequestAttrs(ctx, mr, p)
	if err != nil {
		return nil, err
	}
	attrs["action"] = action
	body := map[string]any{
		"object_kind": "merge_request", "user": s.hookUser(ctx, userID), "project": p.hookAttrs(), "repository": p.repository(),
		"object_attributes": attrs, "labels": labelObjects(mr.Labels),
	}
	if mr.AssigneeID != 0 {
		body["assignee"] = s.hookUser(ctx, mr.AssigneeID)
	}
	return body, nil
}

// --- notes ---

// noteBody is the Note Hook payload; issue or mr is the fact of the
// noteable the note is on (both nil when none is known, and for a
// commit's or a snippet's comment).
func (s *Service) noteBody(ctx context.Context, n noteFact, issue *issueFact, mr *mergeRequestFact) (map[string]any, error) {
	p, err := s.projectData(ctx, n.ProjectID)
	if err != nil {
		return nil, err
	}
	target := p.web
	body := map[string]any{"object_kind": "note", "user": s.hookUser(ctx, n.AuthorID), "project_id": n.ProjectID,
		"project": p.hookAttrs(), "repository": p.repository()}
	switch {
	case issue != nil:
		target = issue.URL
		body["issue"] = s.issueAttrs(ctx, *issue)
	case mr != nil:
		target = mr.URL
		attrs, err := s.mergeRequestAttrs(ctx, *mr, p)
		if err != nil {
			return nil, err
		}
		body["merge_request"] = attrs
	case n.NoteableType == "Commit":
		target = p.web + "/commit/" + n.CommitID
		if c, ok := s.commit(ctx, n.ProjectID, n.CommitID); ok {
			body["commit"] = p.hookCommit(c)
		}
	case n.NoteableType == "Snippet":
		target = p.web + "/snippets/" + strconv.FormatInt(n.NoteableID, 10)
		body["snippet"] = map[string]any{"id": n.NoteableID, "project_id": n.ProjectID}
	}
	// A commit's comment has no noteable id (GitLab's null): its commit_id
	// names the commit.
	var noteableID any = n.NoteableID
	if n.NoteableType == "Commit" {
		noteableID = nil
	}
	body["object_attributes"] = map[string]any{
		"id": n.NoteID, "note": n.Body, "noteable_type": n.NoteableType, "author_id": n.AuthorID,
		"created_at": rubyTime(n.CreatedAt), "updated_at": rubyTime(n.UpdatedAt), "project_id": n.ProjectID,
		"attachment": nil, "line_code": nil, "commit_id": n.CommitID, "noteable_id": noteableID, "system": n.System,
		"st_diff": nil, "url": target + "#note_" + strconv.FormatInt(n.NoteID, 10),
	}
	// A note of a thread says so, and a line comment where it was made
	// (as GitLab's DiffNote), so a hook can tell it from a plain comment.
	if n.Type != "" {
		attrs := body["object_attributes"].(map[string]any)
		attrs["type"], attrs["discussion_id"] = n.Type, n.DiscussionID
		if n.Position != nil {
			attrs["position"] = n.Position
		}
	}
	return body, nil
}

// --- jobs and pipelines ---

// jobBody is the Job Hook payload (object_kind "build", as 9.x kept it).
func (s *Service) jobBody(ctx context.Context, j jobFact, pipeline *pipelineFact) (map[string]any, error) {
	p, err := s.projectData(ctx, j.ProjectID)
	if err != nil {
		return nil, err
	}
	u, _ := s.userData(ctx, j.UserID)
	c, _ := s.commit(ctx, j.ProjectID, j.SHA)
	commit := map[string]any{
		"id": j.PipelineID, "sha": j.SHA, "message": c.Message, "author_name": c.AuthorName, "author_email": c.AuthorEmail,
		"status": nil, "duration": nil, "started_at": nil, "finished_at": nil,
	}
	if pipeline != nil {
		commit["status"], commit["finished_at"] = pipeline.Status, rubyTimePtr(pipeline.FinishedAt)
		if pipeline.Duration != nil {
			commit["duration"] = *pipeline.Duration
		}
		if pipeline.StartedAt != nil {
			commit["started_at"] = rubyTimePtr(pipeline.StartedAt)
		}
	}
	var duration any
	if j.Duration != nil {
		duration = *j.Duration
	}
	return map[string]any{
		"object_kind": "build", "ref": j.Ref, "tag": j.Tag, "before_sha": j.BeforeSHA, "sha": j.SHA,
		"build_id": j.JobID, "build_name": j.Name, "build_stage": j.Stage, "build_status": j.Status,
		"build_started_at": rubyTimePtr(j.StartedAt), "build_finished_at": rubyTimePtr(j.FinishedAt),
		"build_duration": duration, "build_allow_failure": j.AllowFailure,
		"project_id": j.ProjectID, "project_name": p.info.NameWithNamespace,
		"user":   map[string]any{"id": u.ID, "name": u.Name, "email": u.Email},
		"commit": commit, "repository": p.fullRepository(),
	}, nil
}

// pipelineBody is the Pipeline Hook payload; jobs are the pipeline's jobs
// known so far, in id order.
func (s *Service) pipelineBody(ctx context.Context, pl pipelineFact, jobs []jobFact) (map[string]any, error) {
	p, err := s.projectData(ctx, pl.ProjectID)
	if err != nil {
		return nil, err
	}
	var commit any
	if c, ok := s.commit(ctx, pl.ProjectID, pl.SHA); ok {
		commit = p.hookCommit(c)
	}
	var duration any
	if pl.Duration != nil {
		duration = *pl.Duration
	}
	// A pipeline's jobs mostly share one user: each is read once.
	users := map[int64]map[string]any{}
	user := func(id int64) map[string]any {
		u, ok := users[id]
		if !ok {
			u = s.hookUser(ctx, id)
			users[id] = u
		}
		return u
	}
	builds := make([]map[string]any, 0, len(jobs))
	for _, j := range jobs {
		when := j.When
		switch {
		case when != "":
		case j.Status == "manual": // an event from before when was carried
			when = "manual"
		default:
			when = "on_success"
		}
		artifacts := map[string]any{"filename": nil, "size": nil}
		if j.Artifacts != nil {
			artifacts = map[string]any{"filename": j.Artifacts.Filename, "size": j.Artifacts.Size}
		}
		builds = append(builds, map[string]any{
			"id": j.JobID, "stage": j.Stage, "name": j.Name, "status": j.Status,
			"created_at": rubyTime(j.CreatedAt), "started_at": rubyTimePtr(j.StartedAt), "finished_at": rubyTimePtr(j.FinishedAt),
			"when": when, "manual": when == "manual", "user": user(j.UserID), "runner": runnerData(j.Runner),
			"artifacts_file": artifacts,
		})
	}
	// 9.x listed the stages that have jobs (stages_names), not every
	// stage the configuration names; the config's order is kept.
	stages := []string{}
	withJobs := map[string]bool{}
	for _, j := range jobs {
		withJobs[j.Stage] = true
	}
	for _, st := range pl.Stages {
		if len(jobs) == 0 || withJobs[st] {
			stages = append(stages, st)
		}
	}
	return map[string]any{
		"object_kind": "pipeline",
		"object_attributes": map[string]any{
			"id": pl.PipelineID, "ref": pl.Ref, "tag": pl.Tag, "sha": pl.SHA, "before_sha": pl.BeforeSHA,
			"status": pl.Status, "stages": stages, "created_at": rubyTime(pl.CreatedAt),
			"finished_at": rubyTimePtr(pl.FinishedAt), "duration": duration,
		},
		"user": user(pl.UserID), "project": p.hookAttrs(), "commit": commit, "builds": builds,
	}, nil
}

// runnerData is a build's runner in a Pipeline Hook: its id, description,
// active and is_shared as the job's event recorded them, or null for a job
// no runner took (an executor plugin's, or one not started).
func runnerData(r *cievent.JobRunner) any {
	if r == nil {
		return nil
	}
	return map[string]any{"id": r.ID, "description": r.Description, "active": r.Active, "is_shared": r.IsShared}
}
