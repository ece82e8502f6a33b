package webhooks_test

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// An annotated tag sends a Tag Push Hook whose checkout_sha is the tagged
// commit and whose message is the tag's.
func TestTagPushHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tagged", "private")
	c := commitFile(t, alice.Client, p.ID, "master", "a.txt", "a\n")
	rcv := newReceiver(t)
	e.Drain(t) // the first push is not the tag's hook's business
	addHook(t, alice.Client, p.ID, rcv.URL+"/tag", "")
	tag, _, err := alice.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1.0"), Ref: gitlab.Ptr("master"),
		Message: gitlab.Ptr("release one")})
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.waitFor(t, "/tag", 1)[0]
	if got := d.Header.Get("X-Gitlab-Event"); got != "Tag Push Hook" {
		t.Errorf("X-Gitlab-Event = %q", got)
	}
	if _, ok := d.Header["X-Gitlab-Token"]; ok {
		t.Error("X-Gitlab-Token sent for a hook without a token")
	}
	wantFields(t, "tag_push", d.Body, map[string]any{
		"object_kind": "tag_push", "ref": "refs/tags/v1.0", "before": "0000000000000000000000000000000000000000",
		"checkout_sha": c.ID, "message": anyValue, "user_id": alice.ID, "user_name": "User alice", "project_id": p.ID,
		"commits": []any{}, "total_commits_count": 0,
	})
	if after, _ := d.Body["after"].(string); len(after) != 40 || after == c.ID {
		t.Errorf("after = %q: want the tag object, not the commit %s", after, c.ID)
	}
	if msg, _ := d.Body["message"].(string); !strings.HasPrefix(msg, "release one") {
		t.Errorf("message = %q", d.Body["message"])
	}
	golden(t, "tag_push", d, known(e, rcv))
	_ = tag
}

// Issues: opened, then closed, each an Issue Hook with the issue's
// attributes, assignees, labels and the actor.
func TestIssueHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "tracker", "private")
	if _, _, err := alice.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(bob.ID),
		AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	addHook(t, alice.Client, p.ID, rcv.URL+"/issues", "")
	is, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Broken"),
		Description: gitlab.Ptr("It is broken"), AssigneeIDs: &[]int64{bob.ID}, Labels: &gitlab.LabelOptions{"bug"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bob.Client.Issues.UpdateIssue(p.ID, is.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	got := rcv.waitFor(t, "/issues", 2)
	open, closed := got[0], got[1]
	if ev := open.Header.Get("X-Gitlab-Event"); ev != "Issue Hook" {
		t.Errorf("X-Gitlab-Event = %q", ev)
	}
	web := e.URL + "/alice/tracker"
	wantFields(t, "issue", open.Body, map[string]any{
		"object_kind": "issue",
		"user":        map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
		"repository":  map[string]any{"name": "tracker", "url": "git@127.0.0.1:alice/tracker.git", "description": "", "homepage": web},
		"assignees":   []any{map[string]any{"name": "User bob", "username": "bob", "avatar_url": anyValue}},
		"assignee":    map[string]any{"name": "User bob", "username": "bob", "avatar_url": anyValue},
		"labels":      []any{map[string]any{"title": "bug"}},
		"project":     anyValue,
	})
	if u := open.Body["user"].(map[string]any); u["avatar_url"] == nil {
		t.Error("user.avatar_url is null")
	}
	attrs := open.Body["object_attributes"].(map[string]any)
	wantFields(t, "issue.object_attributes", attrs, map[string]any{
		"id": is.ID, "iid": is.IID, "title": "Broken", "description": "It is broken", "state": "opened",
		"project_id": p.ID, "author_id": alice.ID, "assignee_ids": []int64{bob.ID}, "assignee_id": bob.ID,
		"milestone_id": nil, "created_at": anyValue, "updated_at": anyValue, "confidential": false, "due_date": nil,
		"url": web + "/issues/" + store.IDString(is.IID), "action": "open",
	})
	if ts, _ := attrs["created_at"].(string); !strings.HasSuffix(ts, " UTC") || len(ts) != len("2006-01-02 15:04:05 UTC") {
		t.Errorf("created_at = %q, want Ruby's Time#to_s", ts)
	}
	if ev := closed.Header.Get("X-Gitlab-Event"); ev != "Issue Hook" {
		t.Errorf("closing: X-Gitlab-Event = %q (system notes fire no Note Hook)", ev)
	}
	wantFields(t, "closed", closed.Body, map[string]any{"user": map[string]any{"name": "User bob", "username": "bob", "avatar_url": anyValue}})
	wantFields(t, "closed.object_attributes", closed.Body["object_attributes"].(map[string]any),
		map[string]any{"state": "closed", "action": "close", "iid": is.IID})
	golden(t, "issue_open", open, known(e, rcv))
	golden(t, "issue_close", closed, known(e, rcv))
}

// A comment on an issue sends a Note Hook with the note and the issue.
func TestNoteHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "talk", "private")
	is, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Question")})
	if err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	e.Drain(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/notes", "")
	_, _, err = alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/notes"),
		IssuesEvents: gitlab.Ptr(false), NoteEvents: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	n, _, err := alice.Client.Notes.CreateIssueNote(p.ID, is.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Why?")})
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.waitFor(t, "/notes", 1)[0]
	if ev := d.Header.Get("X-Gitlab-Event"); ev != "Note Hook" {
		t.Errorf("X-Gitlab-Event = %q", ev)
	}
	web := e.URL + "/alice/talk"
	wantFields(t, "note", d.Body, map[string]any{
		"object_kind": "note", "project_id": p.ID, "project": anyValue, "repository": anyValue,
		"user": map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
	})
	wantFields(t, "note.object_attributes", d.Body["object_attributes"].(map[string]any), map[string]any{
		"id": n.ID, "note": "Why?", "noteable_type": "Issue", "author_id": alice.ID, "created_at": anyValue,
		"updated_at": anyValue, "project_id": p.ID, "attachment": nil, "line_code": nil, "commit_id": "",
		"noteable_id": is.ID, "system": false, "st_diff": nil,
		"url": web + "/issues/" + store.IDString(is.IID) + "#note_" + store.IDString(n.ID),
	})
	wantFields(t, "note.issue", d.Body["issue"].(map[string]any), map[string]any{
		"id": is.ID, "iid": is.IID, "title": "Question", "state": "opened", "url": web + "/issues/" + store.IDString(is.IID)})
	if len(rcv.all()) != 1 {
		t.Errorf("received %d, want only the note", len(rcv.all()))
	}
	golden(t, "note_issue", d, known(e, rcv))
}

// A comment on a commit sends a Note Hook with noteable_type "Commit", its
// commit_id, no noteable_id, and the commit.
func TestCommitNoteHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "review", "private")
	c := commitFile(t, alice.Client, p.ID, "master", "main.go", "package main\n\nfunc main() {}\n")
	rcv := newReceiver(t)
	e.Drain(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/notes", "")
	_, _, err := alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/notes"),
		PushEvents: gitlab.Ptr(false), NoteEvents: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = alice.Client.Commits.PostCommitComment(p.ID, c.ID, &gitlab.PostCommitCommentOptions{Note: gitlab.Ptr("Nice @bob"),
		Path: gitlab.Ptr("main.go"), Line: gitlab.Ptr(int64(3)), LineType: gitlab.Ptr("new")})
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.waitFor(t, "/notes", 1)[0]
	if ev := d.Header.Get("X-Gitlab-Event"); ev != "Note Hook" {
		t.Errorf("X-Gitlab-Event = %q", ev)
	}
	web := e.URL + "/alice/review"
	wantFields(t, "note", d.Body, map[string]any{
		"object_kind": "note", "project_id": p.ID, "project": anyValue, "repository": anyValue,
		"user": map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
	})
	attrs := d.Body["object_attributes"].(map[string]any)
	id, _ := attrs["id"].(float64)
	if id < 1 {
		t.Fatalf("object_attributes.id %v", attrs["id"])
	}
	wantFields(t, "note.object_attributes", attrs, map[string]any{
		"id": int64(id), "note": "Nice @bob", "noteable_type": "Commit", "author_id": alice.ID, "created_at": anyValue,
		"updated_at": anyValue, "project_id": p.ID, "attachment": nil, "line_code": nil, "commit_id": c.ID,
		"noteable_id": nil, "system": false, "st_diff": nil,
		"url": web + "/commit/" + c.ID + "#note_" + store.IDString(int64(id)),
	})
	wantFields(t, "note.commit", d.Body["commit"].(map[string]any), map[string]any{
		"id": c.ID, "message": c.Message, "timestamp": anyValue, "url": web + "/commit/" + c.ID,
		"author": map[string]any{"name": c.AuthorName, "email": c.AuthorEmail}})
	for _, k := range []string{"issue", "merge_request", "snippet"} {
		if _, ok := d.Body[k]; ok {
			t.Errorf("a commit's note has %q", k)
		}
	}
	if len(rcv.all()) != 1 {
		t.Errorf("received %d, want only the note", len(rcv.all()))
	}
	golden(t, "note_commit", d, known(e, rcv))
}

// A comment on a project snippet sends a Note Hook with noteable_type
// "Snippet" and the snippet (its id and project).
func TestSnippetNoteHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "snips", "private")
	sn, _, err := alice.Client.ProjectSnippets.CreateSnippet(p.ID, &gitlab.CreateProjectSnippetOptions{Title: gitlab.Ptr("Hello"),
		FileName: gitlab.Ptr("hello.rb"), Content: gitlab.Ptr("puts 'hello'\n"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	e.Drain(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/notes", "")
	if _, _, err := alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/notes"),
		PushEvents: gitlab.Ptr(false), NoteEvents: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	n, _, err := alice.Client.Notes.CreateSnippetNote(p.ID, sn.ID, &gitlab.CreateSnippetNoteOptions{Body: gitlab.Ptr("Shorter?")})
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.waitFor(t, "/notes", 1)[0]
	if ev := d.Header.Get("X-Gitlab-Event"); ev != "Note Hook" {
		t.Errorf("X-Gitlab-Event = %q", ev)
	}
	web := e.URL + "/alice/snips"
	wantFields(t, "note", d.Body, map[string]any{
		"object_kind": "note", "project_id": p.ID, "project": anyValue, "repository": anyValue,
		"user":    map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
		"snippet": map[string]any{"id": sn.ID, "project_id": p.ID},
	})
	wantFields(t, "note.object_attributes", d.Body["object_attributes"].(map[string]any), map[string]any{
		"id": n.ID, "note": "Shorter?", "noteable_type": "Snippet", "author_id": alice.ID, "noteable_id": sn.ID,
		"commit_id": "", "system": false, "project_id": p.ID,
		"url": web + "/snippets/" + store.IDString(sn.ID) + "#note_" + store.IDString(n.ID),
	})
	for _, k := range []string{"issue", "merge_request", "commit"} {
		if _, ok := d.Body[k]; ok {
			t.Errorf("a snippet's note has %q", k)
		}
	}
	golden(t, "note_snippet", d, known(e, rcv))
}

// A merge request sends a Merge Request Hook with source, target and
// last_commit.
func TestMergeRequestHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "mr", "private")
	commitFile(t, alice.Client, p.ID, "master", "a.txt", "a\n")
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	c := commitFile(t, alice.Client, p.ID, "feature", "b.txt", "b\n")
	rcv := newReceiver(t)
	e.Drain(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/mr", "")
	if _, _, err := alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/mr"),
		PushEvents: gitlab.Ptr(false), MergeRequestsEvents: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	mr, _, err := alice.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Add b"),
		SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("master"), AssigneeID: gitlab.Ptr(alice.ID)})
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.waitFor(t, "/mr", 1)[0]
	if ev := d.Header.Get("X-Gitlab-Event"); ev != "Merge Request Hook" {
		t.Errorf("X-Gitlab-Event = %q", ev)
	}
	web := e.URL + "/alice/mr"
	wantFields(t, "merge_request", d.Body, map[string]any{
		"object_kind": "merge_request", "project": anyValue, "repository": anyValue, "labels": []any{},
		"user":     map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
		"assignee": map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
	})
	attrs := d.Body["object_attributes"].(map[string]any)
	wantFields(t, "merge_request.object_attributes", attrs, map[string]any{
		"id": mr.ID, "iid": mr.IID, "target_branch": "master", "source_branch": "feature", "source_project_id": p.ID,
		"target_project_id": p.ID, "author_id": alice.ID, "assignee_id": alice.ID, "title": "Add b", "description": "",
		"state": "opened", "merge_status": anyValue, "created_at": anyValue, "updated_at": anyValue, "milestone_id": nil,
		"merge_commit_sha": nil, "work_in_progress": false, "url": web + "/merge_requests/" + store.IDString(mr.IID), "action": "open",
	})
	wantFields(t, "merge_request.source", attrs["source"].(map[string]any), map[string]any{"id": p.ID, "path_with_namespace": "alice/mr"})
	wantFields(t, "merge_request.target", attrs["target"].(map[string]any), map[string]any{"id": p.ID, "web_url": web})
	wantFields(t, "merge_request.last_commit", attrs["last_commit"].(map[string]any), map[string]any{
		"id": c.ID, "message": anyValue, "timestamp": anyValue, "url": web + "/commit/" + c.ID,
		"author": map[string]any{"name": c.AuthorName, "email": c.AuthorEmail}})
	golden(t, "merge_request_open", d, known(e, rcv))

	// A comment on it: a Note Hook with the merge request.
	if _, _, err := alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/mr"),
		MergeRequestsEvents: gitlab.Ptr(false), NoteEvents: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	n, _, err := alice.Client.Notes.CreateMergeRequestNote(p.ID, mr.IID, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr("LGTM")})
	if err != nil {
		t.Fatal(err)
	}
	d = rcv.waitFor(t, "/mr", 2)[1]
	if ev := d.Header.Get("X-Gitlab-Event"); ev != "Note Hook" {
		t.Fatalf("X-Gitlab-Event = %q", ev)
	}
	wantFields(t, "note.object_attributes", d.Body["object_attributes"].(map[string]any), map[string]any{
		"id": n.ID, "note": "LGTM", "noteable_type": "MergeRequest", "noteable_id": mr.ID,
		"url": web + "/merge_requests/" + store.IDString(mr.IID) + "#note_" + store.IDString(n.ID)})
	wantFields(t, "note.merge_request", d.Body["merge_request"].(map[string]any), map[string]any{
		"id": mr.ID, "iid": mr.IID, "title": "Add b", "source_branch": "feature", "target_branch": "master", "source": anyValue,
		"target": anyValue, "last_commit": anyValue})
	if _, ok := d.Body["issue"]; ok {
		t.Error("a note on a merge request carries an issue")
	}
	golden(t, "note_merge_request", d, known(e, rcv))
}

// A push with a .gitlab-ci.yml makes a pipeline: Pipeline Hooks and Job
// Hooks follow its status.
func TestPipelineAndJobHookPayloads(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "ci", "private")
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/ci", "")
	if _, _, err := alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/ci"),
		PushEvents: gitlab.Ptr(false), JobEvents: gitlab.Ptr(true), PipelineEvents: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	c := commitFile(t, alice.Client, p.ID, "master", ".gitlab-ci.yml", "build:\n  stage: build\n  script: [\"true\"]\n")
	var pipe, job map[string]any
	var pipeHdr, jobHdr string
	var pipeD, jobD delivery
	deadline := 0
	for pipe == nil || job == nil {
		got := rcv.waitFor(t, "/ci", deadline+1)
		deadline = len(got)
		for _, d := range got {
			switch d.Body["object_kind"] {
			case "pipeline":
				pipe, pipeHdr, pipeD = d.Body, d.Header.Get("X-Gitlab-Event"), d
			case "build":
				job, jobHdr, jobD = d.Body, d.Header.Get("X-Gitlab-Event"), d
			}
		}
	}
	if pipeHdr != "Pipeline Hook" || jobHdr != "Job Hook" {
		t.Errorf("X-Gitlab-Event = %q, %q", pipeHdr, jobHdr)
	}
	web := e.URL + "/alice/ci"
	attrs := pipe["object_attributes"].(map[string]any)
	wantFields(t, "pipeline.object_attributes", attrs, map[string]any{
		"id": anyValue, "ref": "master", "tag": false, "sha": c.ID, "before_sha": anyValue, "status": anyValue,
		"stages": anyValue, "created_at": anyValue, "finished_at": anyValue, "duration": anyValue,
	})
	wantFields(t, "pipeline", pipe, map[string]any{
		"user":    map[string]any{"name": "User alice", "username": "alice", "avatar_url": anyValue},
		"project": anyValue, "builds": anyValue,
		"commit": map[string]any{"id": c.ID, "message": "change .gitlab-ci.yml", "timestamp": anyValue, "url": web + "/commit/" + c.ID,
			"author": map[string]any{"name": c.AuthorName, "email": c.AuthorEmail}},
	})
	wantFields(t, "job", job, map[string]any{
		"object_kind": "build", "ref": "master", "tag": false, "before_sha": anyValue, "sha": c.ID,
		"build_id": anyValue, "build_name": "build", "build_stage": "build", "build_status": anyValue,
		"build_started_at": anyValue, "build_finished_at": anyValue, "build_duration": anyValue, "build_allow_failure": false,
		"project_id": p.ID, "project_name": "User alice / ci",
		"user":       map[string]any{"id": alice.ID, "name": "User alice", "email": "alice@example.com"},
		"repository": anyValue,
	})
	wantFields(t, "job.commit", job["commit"].(map[string]any), map[string]any{
		"id": attrs["id"], "sha": c.ID, "message": "change .gitlab-ci.yml", "author_name": c.AuthorName,
		"author_email": c.AuthorEmail, "status": anyValue, "duration": anyValue, "started_at": anyValue, "finished_at": anyValue,
	})
	// The last pipeline payload lists the job.
	var last map[string]any
	for _, d := range rcv.all() {
		if d.Body["object_kind"] == "pipeline" {
			last = d.Body
		}
	}
	if st := last["object_attributes"].(map[string]any)["stages"]; !equal(st, []any{"build"}) {
		t.Errorf("stages = %v, want the stages that have jobs", st)
	}
	builds := last["builds"].([]any)
	if len(builds) != 1 {
		t.Fatalf("builds = %v", builds)
	}
	wantFields(t, "pipeline.builds[0]", builds[0].(map[string]any), map[string]any{
		"id": job["build_id"], "stage": "build", "name": "build", "status": anyValue, "created_at": anyValue,
		"started_at": anyValue, "finished_at": anyValue, "when": "on_success", "manual": false,
		"user": anyValue, "runner": nil, "artifacts_file": map[string]any{"filename": nil, "size": nil},
	})

	// Without a runner both stay pending: one payload each.
	golden(t, "pipeline", pipeD, known(e, rcv))
	golden(t, "job", jobD, known(e, rcv))

	// The test endpoint samples the latest job and pipeline.
	for trig, kind := range map[string]string{"job_events": "build", "pipeline_events": "pipeline"} {
		st, raw := e.call(t, alice.Token, "POST", "/projects/"+store.IDString(p.ID)+"/hooks/"+store.IDString(int64(h.ID))+"/test/"+trig, nil)
		if st != 201 {
			t.Fatalf("test %s: %d %s", trig, st, raw)
		}
		if sent := obj(t, raw)["request_data"].(map[string]any); sent["object_kind"] != kind {
			t.Errorf("test %s sent %v", trig, sent["object_kind"])
		}
	}
}

// A job a GitLab Runner ran names that runner in the Pipeline Hook's
// builds (id, description, active, is_shared), as 9.x's did; the runner
// here speaks the runner API over raw HTTP.
func TestPipelineHookNamesTheRunner(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "ran", "private")
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/ci", "")
	if _, _, err := alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/ci"),
		PushEvents: gitlab.Ptr(false), PipelineEvents: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	st, raw := e.call(t, "", "POST", "/runners", map[string]any{"token": p.RunnersToken, "description": "hook runner"})
	if st != 201 {
		t.Fatalf("register: %d %s", st, raw)
	}
	reg := obj(t, raw)
	commitFile(t, alice.Client, p.ID, "master", ".gitlab-ci.yml", "build:\n  script: [\"true\"]\n")
	st, raw = e.call(t, "", "POST", "/jobs/request", map[string]any{"token": reg["token"]})
	if st != 201 {
		t.Fatalf("job request: %d %s", st, raw)
	}
	job := obj(t, raw)
	jobID := int64(job["id"].(float64))
	// Its artifacts, as the runner uploads them (multipart "file").
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "artifacts.zip")
	_, _ = fw.Write([]byte("PK-not-really-a-zip"))
	mw.Close()
	resp := e.Do(t, "POST", "/api/v4/jobs/"+store.IDString(jobID)+"/artifacts", &form, "JOB-TOKEN", job["token"].(string),
		"Content-Type", mw.FormDataContentType())
	if body := readAll(t, resp); resp.StatusCode != 201 {
		t.Fatalf("artifacts upload: %d %s", resp.StatusCode, body)
	}
	if st, raw = e.call(t, "", "PUT", "/jobs/"+store.IDString(jobID), map[string]any{"token": job["token"], "state": "success"}); st != 200 {
		t.Fatalf("job update: %d %s", st, raw)
	}
	var builds []any
	var success delivery
	for n := 1; builds == nil; n++ {
		got := rcv.waitFor(t, "/ci", n)
		if b := got[n-1].Body; b["object_kind"] == "pipeline" && b["object_attributes"].(map[string]any)["status"] == "success" {
			builds, success = b["builds"].([]any), got[n-1]
		}
	}
	if len(builds) != 1 {
		t.Fatalf("builds = %v", builds)
	}
	want := map[string]any{"id": reg["id"], "description": "hook runner", "active": true, "is_shared": false}
	if got := builds[0].(map[string]any)["runner"]; !equal(got, want) {
		t.Errorf("builds[0].runner = %v, want %v", got, want)
	}
	// The job's own when and its archive, not fixed values.
	wantFields(t, "builds[0]", builds[0].(map[string]any), map[string]any{"when": "on_success", "manual": false,
		"artifacts_file": map[string]any{"filename": "artifacts.zip", "size": 19}})
	golden(t, "pipeline_success", success, known(e, rcv))
}

// A line comment on a merge request's diff sends a Note Hook that says
// so, as GitLab's DiffNote does: its type, its thread and the position it
// was made on; a note of a thread that is not on a line is a
// DiscussionNote, without a position.
func TestLineCommentNoteHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "lines", "private")
	commitFile(t, alice.Client, p.ID, "master", "main.go", "package main\n")
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	commitFile(t, alice.Client, p.ID, "topic", "main.go", "package main\n\nfunc main() {}\n")
	mr, _, err := alice.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Main"),
		SourceBranch: gitlab.Ptr("topic"), TargetBranch: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	e.Drain(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/notes", "")
	_, _, err = alice.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{URL: gitlab.Ptr(rcv.URL + "/notes"),
		PushEvents: gitlab.Ptr(false), MergeRequestsEvents: gitlab.Ptr(false), NoteEvents: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	refs := got.DiffRefs
	line, _, err := alice.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{
		Body: gitlab.Ptr("Say why"), Position: &gitlab.PositionOptions{BaseSHA: gitlab.Ptr(refs.BaseSha), StartSHA: gitlab.Ptr(refs.StartSha),
			HeadSHA: gitlab.Ptr(refs.HeadSha), PositionType: gitlab.Ptr("text"), NewPath: gitlab.Ptr("main.go"), OldPath: gitlab.Ptr("main.go"),
			NewLine: gitlab.Ptr(int64(3))}})
	if err != nil {
		t.Fatal(err)
	}
	d := rcv.waitFor(t, "/notes", 1)[0]
	wantFields(t, "line comment", d.Body["object_attributes"].(map[string]any), map[string]any{
		"type": "DiffNote", "discussion_id": line.ID, "noteable_type": "MergeRequest", "note": "Say why",
		"position": map[string]any{"base_sha": refs.BaseSha, "start_sha": refs.StartSha, "head_sha": refs.HeadSha,
			"position_type": "text", "old_path": "main.go", "new_path": "main.go", "old_line": nil, "new_line": float64(3)},
	})
	thread, _, err := alice.Client.Discussions.CreateMergeRequestDiscussion(p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{
		Body: gitlab.Ptr("In general")})
	if err != nil {
		t.Fatal(err)
	}
	attrs := rcv.waitFor(t, "/notes", 2)[1].Body["object_attributes"].(map[string]any)
	wantFields(t, "thread", attrs, map[string]any{"type": "DiscussionNote", "discussion_id": thread.ID, "note": "In general"})
	if _, ok := attrs["position"]; ok {
		t.Errorf("a thread's note has a position: %v", attrs["position"])
	}
}
