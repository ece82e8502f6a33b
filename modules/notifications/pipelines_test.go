package notifications_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
	"github.com/fennec-forge/fennec/core/store"
)

var (
	buildOnce sync.Once
	pluginDir string
	buildErr  error
)

// shellExecutor builds the shipped shell executor once for the package.
func shellExecutor(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed (the shell executor fetches with it)")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fennec-notify-plugins-")
		if err != nil {
			buildErr = err
			return
		}
		pluginDir = dir
		// Built once per source for every package's tests (gobuild).
		buildErr = gobuild.InstallTo("../../plugins/executor-shell", filepath.Join(dir, "executor-shell"))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return pluginDir
}

func TestMain(m *testing.M) {
	code := fennectest.Main(m) // stops the PostgreSQL server of FENNEC_TEST_STORE=postgres
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}

// pipelineOf waits for the pipeline of sha to finish with status.
func pipelineOf(t *testing.T, c *gitlab.Client, project int64, sha, status string) int64 {
	t.Helper()
	last := ""
	var id int64
	fennectest.Poll(t, 60*time.Second, func() (bool, string) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{SHA: gitlab.Ptr(sha)})
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range list {
			if pl.SHA != sha {
				continue
			}
			if last = pl.Status; last == status {
				id = pl.ID
				return true, ""
			}
			if last == "failed" || last == "success" {
				jobs, _, _ := c.Jobs.ListPipelineJobs(project, pl.ID, nil)
				for _, j := range jobs {
					if r, _, _ := c.Jobs.GetTraceFile(project, j.ID); r != nil {
						b, _ := io.ReadAll(r)
						t.Fatalf("pipeline %d is %s; job %s: %s", pl.ID, last, j.Name, b)
					}
				}
			}
		}
		return false, fmt.Sprintf("pipeline of %s: %q, want %s", sha, last, status)
	})
	return id
}

func TestPipelineRecipients(t *testing.T) {
	t.Parallel()
	e := start(t, fennectest.WithConfig(func(c *config.Config) { c.PluginDir = shellExecutor(t) }))
	pia := e.CreateUser(t, "pia")
	watcher := e.CreateUser(t, "pw")
	p := e.project(t, pia.Client, "Pipe", "private")
	e.member(t, p, watcher, gitlab.DeveloperPermissions)
	c := &cast{e: e, p: p, u: map[string]*fennectest.User{"pia": pia, "pw": watcher}, byEmail: map[string]string{pia.Email: "pia", watcher.Email: "pw"}}
	c.level(t, "pw", "project", "watch", nil)
	step := 0
	run := func(script, status string) (int64, string) {
		t.Helper()
		step++
		action := gitlab.FileCreate
		if step > 1 {
			action = gitlab.FileUpdate
		}
		commit, _, err := pia.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
			CommitMessage: gitlab.Ptr(fmt.Sprintf("step %d", step)), Actions: []*gitlab.CommitActionOptions{{
				Action: gitlab.Ptr(action), FilePath: gitlab.Ptr(".gitlab-ci.yml"),
				Content: gitlab.Ptr(fmt.Sprintf("test:\n  script:\n    - echo step %d\n    - %s\n", step, script))}}})
		if err != nil {
			t.Fatal(err)
		}
		return pipelineOf(t, pia.Client, p.ID, commit.ID, status), commit.ID
	}
	subject := func(id int64, status, sha string) string {
		return fmt.Sprintf("Pipe | Pipeline #%d has %s for master | %s", id, status, sha[:8])
	}

	// Failed, author at participating: the author (although she is the
	// actor), not the watcher.
	id, sha := run("exit 1", "failed")
	mails := c.expect(t, subject(id, "failed", sha), "pia")
	if h := mails[0].Header; h.Get("X-GitLab-Pipeline-Id") != store.IDString(id) || h.Get("Message-ID") != fmt.Sprintf("<pipeline_%d_failed@127.0.0.1>", id) {
		t.Fatalf("pipeline mail: %v", h)
	}
	if want := p.WebURL + "/pipelines/" + store.IDString(id); !strings.Contains(mails[0].Text, want) {
		t.Fatalf("no link %s in %s", want, mails[0].Text)
	}
	goldenMail(t, "pipeline_failed", mails, pia.Email, mailKnown(e, sha[:8], "<short-sha>"))
	// Succeeded at participating: nobody.
	id, sha = run("echo ok", "success")
	c.expect(t, subject(id, "succeeded", sha))
	// Custom with success_pipeline (not failed_pipeline): the success
	// mails, the failure does not.
	c.level(t, "pia", "project", "custom", map[string]bool{"success_pipeline": true})
	id, sha = run("echo ok", "success")
	mails = c.expect(t, subject(id, "succeeded", sha), "pia")
	goldenMail(t, "pipeline_succeeded", mails, pia.Email, mailKnown(e, sha[:8], "<short-sha>"))
	id, sha = run("exit 1", "failed")
	c.expect(t, subject(id, "failed", sha))
	// Mention level: nothing either.
	c.level(t, "pia", "project", "mention", nil)
	id, sha = run("exit 1", "failed")
	c.expect(t, subject(id, "failed", sha))
	if n := len(e.smtp.mails()); n != 0 {
		t.Fatalf("%d more mails: %s", n, e.smtp.mails()[0].Subject)
	}
}
