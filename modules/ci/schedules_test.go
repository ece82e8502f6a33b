package ci_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const scheduledCI = `show:
  script:
    - echo "source=$CI_PIPELINE_SOURCE nightly=${NIGHTLY:-none} user=$GITLAB_USER_ID"
on-schedule:
  only: [schedules]
  script: ["echo only-when-scheduled"]
not-on-schedule:
  except: [schedules]
  script: ["echo never-when-scheduled"]
`

// addMember gives a user a role in a project.
func addMember(t *testing.T, c *gitlab.Client, project, user int64, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := c.ProjectMembers.AddProjectMember(project, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(user), AccessLevel: gitlab.Ptr(level)}); err != nil {
		t.Fatal(err)
	}
}

// The schedules API: who may read, create, edit, delete and take over a
// schedule; GitLab's field errors for bad specs and zones; another
// project's schedule is not found; variables shown only to who may edit.
func TestPipelineSchedulesAPI(t *testing.T) {
	t.Parallel()
	var svc *internal.Service
	s := startRunners(t, fennectest.WithExtract(&svc))
	c := s.Client
	p := stocktest.NewProject(t, c, "scheduled", "private")
	other := stocktest.NewProject(t, c, "elsewhere", "private")
	maint, dev, dev2, reporter, stranger := s.CreateUser(t, ""), s.CreateUser(t, ""), s.CreateUser(t, ""), s.CreateUser(t, ""), s.CreateUser(t, "")
	addMember(t, c, p.ID, maint.ID, gitlab.MaintainerPermissions)
	addMember(t, c, p.ID, dev.ID, gitlab.DeveloperPermissions)
	addMember(t, c, p.ID, dev2.ID, gitlab.DeveloperPermissions)
	addMember(t, c, p.ID, reporter.ID, gitlab.ReporterPermissions)
	base := fmt.Sprintf("/api/v4/projects/%d/pipeline_schedules", p.ID)

	// A Developer creates; the schedule is theirs, active, in UTC, its
	// next run the spec's next minute 3 of an hour.
	created := s.Call(t, dev.Token, http.MethodPost, base, "description=nightly&ref=master&cron=3+*+*+*+*").Expect(t, 201, "")
	var sc map[string]any
	if err := json.Unmarshal(created.Body, &sc); err != nil {
		t.Fatal(err)
	}
	owner, _ := sc["owner"].(map[string]any)
	next, err := time.Parse(time.RFC3339, fmt.Sprint(sc["next_run_at"]))
	if err != nil || sc["description"] != "nightly" || sc["ref"] != "master" || sc["cron"] != "3 * * * *" || sc["cron_timezone"] != "UTC" ||
		sc["active"] != true || owner["username"] != dev.Username || sc["last_pipeline"] != nil || next.Minute() != 3 || !next.After(time.Now()) ||
		next.After(time.Now().Add(time.Hour)) {
		t.Fatalf("created: %s", created.Body)
	}
	id := int64(sc["id"].(float64))
	one := fmt.Sprintf("%s/%d", base, id)

	// Through client-go: a timezone, and the list by scope.
	dc := s.NewClient(t, dev.Token)
	paris, _, err := dc.PipelineSchedules.CreatePipelineSchedule(p.ID, &gitlab.CreatePipelineScheduleOptions{Description: gitlab.Ptr("paris"),
		Ref: gitlab.Ptr("master"), Cron: gitlab.Ptr("30 2 * * 1-5"), CronTimezone: gitlab.Ptr("Europe/Paris"), Active: gitlab.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("Europe/Paris")
	if at := paris.NextRunAt.In(loc); paris.Active || paris.CronTimezone != "Europe/Paris" || at.Hour() != 2 || at.Minute() != 30 ||
		at.Weekday() == time.Saturday || at.Weekday() == time.Sunday {
		t.Fatalf("paris: %+v next %v", paris, at)
	}
	active, _, err := dc.PipelineSchedules.ListPipelineSchedules(p.ID, &gitlab.ListPipelineSchedulesOptions{Scope: gitlab.Ptr(gitlab.PipelineScheduleScopeValue("active"))})
	if err != nil || len(active) != 1 || active[0].ID != id || active[0].Variables != nil || active[0].LastPipeline != nil {
		t.Fatalf("active list: %v %+v", err, active)
	}
	if all, _, err := dc.PipelineSchedules.ListPipelineSchedules(p.ID, nil); err != nil || len(all) != 2 {
		t.Fatalf("whole list: %v %d", err, len(all))
	}

	// Reading: a Reporter may; a stranger to a private project sees none;
	// creating: not a Reporter.
	s.Call(t, reporter.Token, http.MethodGet, one, nil).Expect(t, 200, "")
	s.Call(t, stranger.Token, http.MethodGet, one, nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	s.Call(t, "", http.MethodGet, base, nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	s.Call(t, reporter.Token, http.MethodPost, base, "description=x&ref=master&cron=1+*+*+*+*").Expect(t, 403, `{"message":"403 Forbidden"}`)

	// Bad input: GitLab's 400s.
	for _, tc := range []struct{ body, want string }{
		{"description=x&ref=master", `{"error":"cron is missing"}`},
		{"cron=1+*+*+*+*", `{"error":"description is missing, ref is missing"}`},
		{"description=x&ref=master&cron=61+*+*+*+*", `{"message":{"cron":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=*+*+*+*+*+*", `{"message":{"cron":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=@every+1s", `{"message":{"cron":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=0+0+31+2+*", `{"message":{"cron":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=" + strings.Repeat("1", 300), `{"message":{"cron":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=1+*+*+*+*&cron_timezone=Mars/Olympus", `{"message":{"cron_timezone":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=1+*+*+*+*&cron_timezone=Local", `{"message":{"cron_timezone":[" is invalid syntax"]}}`},
		{"description=x&ref=master&cron=1+*+*+*+*&cron_timezone=../../../etc/passwd", `{"message":{"cron_timezone":[" is invalid syntax"]}}`},
		{"description=+&ref=master&cron=1+*+*+*+*", `{"message":{"description":["can't be blank"]}}`},
		{"description=" + strings.Repeat("d", 256) + "&ref=master&cron=1+*+*+*+*", `{"message":{"description":["is too long (maximum is 255 characters)"]}}`},
	} {
		s.Call(t, dev.Token, http.MethodPost, base, tc.body).Expect(t, 400, tc.want)
	}
	// Hostile text is kept as text, in JSON.
	evil := `<script>alert(1)</script>`
	r := s.Call(t, dev.Token, http.MethodPut, one, map[string]any{"description": evil}).Expect(t, 200, "")
	var hostile map[string]any
	if err := json.Unmarshal(r.Body, &hostile); err != nil || hostile["description"] != evil || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("hostile description: %v %s %v", err, r.Body, r.Header)
	}

	// Edit and delete: the owner or a Maintainer; another Developer not.
	s.Call(t, dev2.Token, http.MethodPut, one, "description=mine").Expect(t, 403, `{"message":"403 Forbidden"}`)
	s.Call(t, dev2.Token, http.MethodDelete, one, nil).Expect(t, 403, `{"message":"403 Forbidden"}`)
	s.Call(t, dev.Token, http.MethodPut, one, "cron=nonsense").Expect(t, 400, `{"message":{"cron":[" is invalid syntax"]}}`)
	edited, _, err := s.NewClient(t, maint.Token).PipelineSchedules.EditPipelineSchedule(p.ID, id, &gitlab.EditPipelineScheduleOptions{
		Description: gitlab.Ptr("nightly build"), Cron: gitlab.Ptr("0 4 * * *"), CronTimezone: gitlab.Ptr("America/New_York")})
	ny, _ := time.LoadLocation("America/New_York")
	if err != nil || edited.Description != "nightly build" || edited.NextRunAt.In(ny).Hour() != 4 || edited.Owner.Username != dev.Username {
		t.Fatalf("edit by a Maintainer: %v %+v", err, edited)
	}

	// Variables: the owner or a Maintainer; shown to them only.
	s.Call(t, dev.Token, http.MethodPost, one+"/variables", "key=NIGHTLY&value=yes").Expect(t, 201, `{"key":"NIGHTLY","variable_type":"env_var","value":"yes"}`)
	s.Call(t, dev.Token, http.MethodPost, one+"/variables", "key=NIGHTLY&value=again").Expect(t, 400, `{"message":{"key":["has already been taken"]}}`)
	s.Call(t, dev.Token, http.MethodPost, one+"/variables", "key=BAD-KEY&value=x").Expect(t, 400, `{"message":{"key":["can contain only letters, digits and '_'."]}}`)
	s.Call(t, dev.Token, http.MethodPost, one+"/variables", "key=X").Expect(t, 400, `{"error":"value is missing"}`)
	s.Call(t, dev2.Token, http.MethodPost, one+"/variables", "key=OTHER&value=x").Expect(t, 403, `{"message":"403 Forbidden"}`)
	s.Call(t, dev.Token, http.MethodPost, one+"/variables", "key=GONE&value=x").Expect(t, 201, "")
	s.Call(t, dev.Token, http.MethodPut, one+"/variables/GONE", "value=y&variable_type=file").Expect(t, 200, `{"key":"GONE","variable_type":"file","value":"y"}`)
	s.Call(t, dev.Token, http.MethodDelete, one+"/variables/GONE", nil).Expect(t, 202, `{"key":"GONE","variable_type":"file","value":"y"}`)
	s.Call(t, dev.Token, http.MethodDelete, one+"/variables/GONE", nil).Expect(t, 404, `{"message":"404 Pipeline Schedule Variable Not Found"}`)
	got, _, err := dc.PipelineSchedules.GetPipelineSchedule(p.ID, id)
	if err != nil || len(got.Variables) != 1 || got.Variables[0].Key != "NIGHTLY" || got.Variables[0].Value != "yes" {
		t.Fatalf("the owner's view: %v %+v", err, got)
	}
	if r := s.Call(t, reporter.Token, http.MethodGet, one, nil).Expect(t, 200, ""); strings.Contains(string(r.Body), "NIGHTLY") || strings.Contains(string(r.Body), `"variables"`) {
		t.Fatalf("a Reporter sees the variables: %s", r.Body)
	}
	// Stored sealed.
	if err := s.Store.View(context.Background(), func(tx *store.Tx) error {
		raw := store.Keys("ci.schedules").Get(tx, store.Key(id))
		if raw == nil || strings.Contains(string(raw), `"yes"`) || strings.Contains(string(raw), "NIGHTLY") {
			t.Fatalf("stored schedule: %s", raw)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Another project's schedule is not found there.
	otherBase := fmt.Sprintf("/api/v4/projects/%d/pipeline_schedules/%d", other.ID, id)
	s.Call(t, s.RootToken, http.MethodGet, otherBase, nil).Expect(t, 404, `{"message":"404 Pipeline Schedule Not Found"}`)
	s.Call(t, s.RootToken, http.MethodDelete, otherBase, nil).Expect(t, 404, `{"message":"404 Pipeline Schedule Not Found"}`)
	s.Call(t, s.RootToken, http.MethodGet, base+"/999999", nil).Expect(t, 404, `{"message":"404 Pipeline Schedule Not Found"}`)

	// Take ownership: a Maintainer; not a Developer.
	s.Call(t, dev2.Token, http.MethodPost, one+"/take_ownership", nil).Expect(t, 403, `{"message":"403 Forbidden"}`)
	taken, _, err := s.NewClient(t, maint.Token).PipelineSchedules.TakeOwnershipOfPipelineSchedule(p.ID, id)
	if err != nil || taken.Owner.Username != maint.Username {
		t.Fatalf("take ownership: %v %+v", err, taken)
	}
	// The former owner is a Developer like any other now.
	s.Call(t, dev.Token, http.MethodPut, one, "description=back").Expect(t, 403, `{"message":"403 Forbidden"}`)

	// Delete: 204, then gone.
	if _, err := dc.PipelineSchedules.DeletePipelineSchedule(p.ID, paris.ID); err != nil {
		t.Fatal(err)
	}
	s.Call(t, dev.Token, http.MethodGet, fmt.Sprintf("%s/%d", base, paris.ID), nil).Expect(t, 404, `{"message":"404 Pipeline Schedule Not Found"}`)

	// A deleted project's schedule, due, is deactivated rather than
	// woken at every tick.
	orphan, _, err := c.PipelineSchedules.CreatePipelineSchedule(other.ID, &gitlab.CreatePipelineScheduleOptions{Description: gitlab.Ptr("orphan"),
		Ref: gitlab.Ptr("master"), Cron: gitlab.Ptr("* * * * *")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Projects.DeleteProject(other.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetScheduleNextRun(context.Background(), orphan.ID, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var row string
		if err := s.Store.View(context.Background(), func(tx *store.Tx) error {
			row = string(store.Keys("ci.schedules").Get(tx, store.Key(orphan.ID)))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(row, `"active":false`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted project's schedule: %s", row)
		}
	}
}

// Play and the loop on the shell executor: a pipeline of source
// schedule for the schedule's ref, its jobs selected by only/except
// schedules and given the schedule's variables; a due schedule is run
// by the loop as its owner, once however overdue, and its next run
// moves on; a blocked owner's schedule makes no pipeline.
func TestPipelineSchedulesRun(t *testing.T) {
	t.Parallel()
	var svc *internal.Service
	s := startWith(t, fennectest.WithExtract(&svc))
	c := s.Client
	p := stocktest.NewProject(t, c, "scheduled-run", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": scheduledCI})
	if pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed"); pl.Status != "success" {
		t.Fatalf("push pipeline %s", pl.Status)
	}
	dev, reporter := s.CreateUser(t, ""), s.CreateUser(t, "")
	addMember(t, c, p.ID, dev.ID, gitlab.DeveloperPermissions)
	addMember(t, c, p.ID, reporter.ID, gitlab.ReporterPermissions)
	dc := s.NewClient(t, dev.Token)
	sc, _, err := dc.PipelineSchedules.CreatePipelineSchedule(p.ID, &gitlab.CreatePipelineScheduleOptions{Description: gitlab.Ptr("nightly"),
		Ref: gitlab.Ptr("master"), Cron: gitlab.Ptr("0 3 * * *")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dc.PipelineSchedules.CreatePipelineScheduleVariable(p.ID, sc.ID, &gitlab.CreatePipelineScheduleVariableOptions{
		Key: gitlab.Ptr("NIGHTLY"), Value: gitlab.Ptr("sched-7")}); err != nil {
		t.Fatal(err)
	}
	one := fmt.Sprintf("/api/v4/projects/%d/pipeline_schedules/%d", p.ID, sc.ID)

	// Play: a Reporter may not; a Developer gets GitLab's 201.
	s.Call(t, reporter.Token, http.MethodPost, one+"/play", nil).Expect(t, 403, `{"message":"403 Forbidden"}`)
	s.Call(t, dev.Token, http.MethodPost, one+"/play", nil).Expect(t, 201, `{"message":"201 Created"}`)
	played := scheduledPipeline(t, s, p.ID, sc.ID, 1)
	checkScheduledRun(t, c, p.ID, played, dev.ID)
	after, _, err := dc.PipelineSchedules.GetPipelineSchedule(p.ID, sc.ID)
	if err != nil || after.LastPipeline == nil || after.LastPipeline.ID != played || after.LastPipeline.Ref != "master" || !after.NextRunAt.Equal(*sc.NextRunAt) {
		t.Fatalf("after play: %v %+v (next run before %v)", err, after, sc.NextRunAt)
	}

	// The loop: three days overdue, a daily schedule runs once, as its
	// owner, and its next run is the coming 03:00.
	if err := svc.SetScheduleNextRun(context.Background(), sc.ID, time.Now().Add(-72*time.Hour)); err != nil {
		t.Fatal(err)
	}
	looped := scheduledPipeline(t, s, p.ID, sc.ID, 2)
	checkScheduledRun(t, c, p.ID, looped, dev.ID)
	now := time.Now().UTC()
	coming := time.Date(now.Year(), now.Month(), now.Day(), 3, 0, 0, 0, time.UTC)
	if !coming.After(now) {
		coming = coming.AddDate(0, 0, 1)
	}
	moved, _, err := dc.PipelineSchedules.GetPipelineSchedule(p.ID, sc.ID)
	if err != nil || !moved.NextRunAt.Equal(coming) {
		t.Fatalf("next run after the loop: %v %v, want %v", err, moved.NextRunAt, coming)
	}
	// Not once per missed day: still two pipelines a moment later.
	time.Sleep(300 * time.Millisecond)
	if list, _, err := dc.PipelineSchedules.ListPipelinesTriggeredBySchedule(p.ID, sc.ID, nil); err != nil || len(list) != 2 {
		t.Fatalf("pipelines of the schedule: %v %d", err, len(list))
	}

	// A blocked owner's due schedule makes no pipeline, and moves on.
	if err := c.Users.BlockUser(dev.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetScheduleNextRun(context.Background(), sc.ID, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, _, err := c.PipelineSchedules.GetPipelineSchedule(p.ID, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.NextRunAt.After(time.Now()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the blocked owner's schedule was not moved on: %v", got.NextRunAt)
		}
	}
	if list, _, err := c.PipelineSchedules.ListPipelinesTriggeredBySchedule(p.ID, sc.ID, nil); err != nil || len(list) != 2 {
		t.Fatalf("pipelines after the blocked owner's run: %v %d", err, len(list))
	}

	// Play on a protected branch needs the right to push or merge to it.
	if err := c.Users.UnblockUser(dev.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ProtectedBranches.ProtectRepositoryBranches(p.ID, &gitlab.ProtectRepositoryBranchesOptions{Name: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	s.Call(t, dev.Token, http.MethodPost, one+"/play", nil).Expect(t, 403, `{"message":"403 Forbidden"}`)
}

// scheduledPipeline waits for the schedule to have n pipelines and
// returns the newest.
func scheduledPipeline(t *testing.T, s *fennectest.Server, project, schedule int64, n int) int64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		list, _, err := s.Client.PipelineSchedules.ListPipelinesTriggeredBySchedule(project, schedule, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == n {
			return list[0].ID
		}
		if len(list) > n || time.Now().After(deadline) {
			t.Fatalf("schedule %d: %d pipelines, want %d", schedule, len(list), n)
		}
	}
}

// checkScheduledRun checks a scheduled pipeline: source, user, the jobs
// only/except schedules select, and the variable in the log.
func checkScheduledRun(t *testing.T, c *gitlab.Client, project, pipeline, user int64) {
	t.Helper()
	pl, _, err := c.Pipelines.GetPipeline(project, pipeline)
	if err != nil || pl.Ref != "master" || pl.User == nil || pl.User.ID != user {
		t.Fatalf("scheduled pipeline: %v %+v", err, pl)
	}
	jobs := jobsByName(t, c, project, pipeline)
	if len(jobs) != 2 || jobs["show"] == nil || jobs["on-schedule"] == nil {
		t.Fatalf("jobs of the scheduled pipeline: %v", jobs)
	}
	want := fmt.Sprintf("source=schedule nightly=sched-7 user=%d", user)
	if j := waitJob(t, c, project, jobs["show"].ID, "success", "failed"); j.Status != "success" {
		t.Fatalf("the scheduled job %s:\n%s", j.Status, trace(t, c, project, j.ID))
	}
	if tr := trace(t, c, project, jobs["show"].ID); !strings.Contains(tr, want) {
		t.Fatalf("trace of the scheduled job, want %q:\n%s", want, tr)
	}
	waitTrace(t, c, project, jobs["show"].ID, want)
	waitTrace(t, c, project, jobs["on-schedule"].ID, "only-when-scheduled")
}

// A schedule's next run survives a restart, and the loop of the new
// start runs a schedule due meanwhile.
func TestPipelineSchedulesRestart(t *testing.T) {
	t.Parallel()
	data, password := t.TempDir(), "schedules-root-pw"
	var projectID, scheduleID int64
	var nextRun time.Time
	t.Run("before", func(t *testing.T) {
		s := startWith(t, fennectest.WithDataDir(data, password))
		p := stocktest.NewProject(t, s.Client, "scheduled-restart", "private")
		projectID = p.ID
		stocktest.CommitFiles(t, s.Client, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": scheduledCI})
		sc, _, err := s.Client.PipelineSchedules.CreatePipelineSchedule(p.ID, &gitlab.CreatePipelineScheduleOptions{Description: gitlab.Ptr("yearly"),
			Ref: gitlab.Ptr("master"), Cron: gitlab.Ptr("0 0 1 1 *")})
		if err != nil {
			t.Fatal(err)
		}
		scheduleID, nextRun = sc.ID, *sc.NextRunAt
	})
	var svc *internal.Service
	s := startWith(t, fennectest.WithDataDir(data, password), fennectest.WithExtract(&svc))
	got, _, err := s.Client.PipelineSchedules.GetPipelineSchedule(projectID, scheduleID)
	if err != nil || !got.NextRunAt.Equal(nextRun) || nextRun.Month() != time.January || nextRun.Day() != 1 {
		t.Fatalf("after the restart: %v next %v, was %v", err, got.NextRunAt, nextRun)
	}
	if err := svc.SetScheduleNextRun(context.Background(), scheduleID, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	id := scheduledPipeline(t, s, projectID, scheduleID, 1)
	pl, _, err := s.Client.Pipelines.GetPipeline(projectID, id)
	if err != nil || pl.Ref != "master" || pl.User.ID != 1 {
		t.Fatalf("the pipeline of the new start: %v %+v", err, pl)
	}
	again, _, err := s.Client.PipelineSchedules.GetPipelineSchedule(projectID, scheduleID)
	if err != nil || !again.NextRunAt.Equal(nextRun) {
		t.Fatalf("next run after the new start's run: %v %v, want %v", err, again.NextRunAt, nextRun)
	}
}
