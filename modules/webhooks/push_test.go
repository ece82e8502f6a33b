package webhooks_test

import (
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A push through the commits API reaches a hook with GitLab's Push Hook
// payload and headers, the token in X-Gitlab-Token and the URL's
// credentials as basic auth (not in the URL).
func TestPushHookPayload(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "hooked", "private")
	rcv := newReceiver(t)
	url := "http://hookuser:s3cr%3At@" + rcv.Listener.Addr().String() + "/push?x=1"
	addHook(t, alice.Client, p.ID, url, "tok-123")
	c := commitFile(t, alice.Client, p.ID, "master", "README.md", "hello\n")

	d := rcv.waitFor(t, "/push", 1)[0]
	if got := d.Header.Get("X-Gitlab-Event"); got != "Push Hook" {
		t.Errorf("X-Gitlab-Event = %q", got)
	}
	if got := d.Header.Get("X-Gitlab-Token"); got != "tok-123" {
		t.Errorf("X-Gitlab-Token = %q", got)
	}
	if got := d.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if !d.HasBA || d.User != "hookuser" || d.Pass != "s3cr:t" {
		t.Errorf("basic auth = %v %q %q", d.HasBA, d.User, d.Pass)
	}
	web := e.URL + "/alice/hooked"
	ssh := "git@127.0.0.1:alice/hooked.git"
	wantExact(t, "push", d.Body, map[string]any{"project": anyValue, "commits": anyValue, "repository": anyValue,
		"object_kind": "push", "before": "0000000000000000000000000000000000000000", "after": c.ID,
		"ref": "refs/heads/master", "checkout_sha": c.ID, "message": nil, "user_id": alice.ID, "user_name": "User alice",
		"user_email": "alice@example.com", "user_avatar": anyValue, "project_id": p.ID, "total_commits_count": 1,
	})
	wantExact(t, "push.project", d.Body["project"].(map[string]any), map[string]any{
		"id": p.ID, "name": "hooked", "description": "", "web_url": web, "avatar_url": nil, "git_ssh_url": ssh,
		"git_http_url": web + ".git", "namespace": "User alice", "visibility_level": 0, "path_with_namespace": "alice/hooked",
		"default_branch": "master", "homepage": web, "url": ssh, "ssh_url": ssh, "http_url": web + ".git",
	})
	wantExact(t, "push.repository", d.Body["repository"].(map[string]any), map[string]any{
		"name": "hooked", "url": ssh, "description": "", "homepage": web, "git_http_url": web + ".git",
		"git_ssh_url": ssh, "visibility_level": 0,
	})
	commits := d.Body["commits"].([]any)
	if len(commits) != 1 {
		t.Fatalf("commits = %v", commits)
	}
	wantExact(t, "push.commits[0]", commits[0].(map[string]any), map[string]any{
		"id": c.ID, "message": "change README.md", "timestamp": anyValue, "url": web + "/commit/" + c.ID,
		"author": map[string]any{"name": c.AuthorName, "email": c.AuthorEmail},
		"added":  []string{"README.md"}, "modified": []string{}, "removed": []string{},
	})
	golden(t, "push", d, known(e, rcv))
}
