package stock_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestHugePagesOnEveryList asks every list endpoint of the stock bundle (all
// GET operations whose OpenAPI answer carries X-Total) for pages and page
// sizes at the edge of int64. Before the fix, (page-1)*per_page overflowed:
// a recovered panic and a 500 where a window was cut from a slice, and page
// 1 again where a store scan or a commit walk got a negative offset.
func TestHugePagesOnEveryList(t *testing.T) {
	srv := stocktest.Start(t)
	root := srv.Client
	group, _, err := root.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("pg"), Path: gitlab.Ptr("pg")})
	if err != nil {
		t.Fatal(err)
	}
	project, _, err := root.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("paged"), NamespaceID: gitlab.Ptr(group.ID)})
	if err != nil {
		t.Fatal(err)
	}
	commit, _, err := root.Commits.CreateCommit(project.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("one"),
		Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("README.md"), Content: gitlab.Ptr("x\n")},
			{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(".gitlab-ci.yml"), Content: gitlab.Ptr("test:\n  script: [\"true\"]\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	// A release's links need a release.
	if _, _, err := root.Releases.CreateRelease(project.ID, &gitlab.CreateReleaseOptions{TagName: gitlab.Ptr("v1"), Ref: gitlab.Ptr("master"),
		Description: gitlab.Ptr("paged release")}); err != nil {
		t.Fatal(err)
	}
	// Lists below an issue, a milestone and a snippet need one of each.
	issue, _, err := root.Issues.CreateIssue(project.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("paged issue")})
	if err != nil {
		t.Fatal(err)
	}
	milestone, _, err := root.Milestones.CreateMilestone(project.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("paged milestone")})
	if err != nil {
		t.Fatal(err)
	}
	groupMilestone, _, err := root.GroupMilestones.CreateGroupMilestone(group.ID, &gitlab.CreateGroupMilestoneOptions{Title: gitlab.Ptr("paged group milestone")})
	if err != nil {
		t.Fatal(err)
	}
	snippet, _, err := root.ProjectSnippets.CreateSnippet(project.ID, &gitlab.CreateProjectSnippetOptions{Title: gitlab.Ptr("paged snippet"),
		FileName: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("x"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	// And a merge request, from a branch one commit ahead.
	if _, _, err := root.Commits.CreateCommit(project.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("feature"), StartBranch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("two"), Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("b.txt"), Content: gitlab.Ptr("b\n")}}}); err != nil {
		t.Fatal(err)
	}
	mr, _, err := root.MergeRequests.CreateMergeRequest(project.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("paged mr"),
		SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	// The award emoji of a note need a note on each kind of noteable.
	issueNote, _, err := root.Notes.CreateIssueNote(project.ID, issue.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("paged note")})
	if err != nil {
		t.Fatal(err)
	}
	mrNote, _, err := root.Notes.CreateMergeRequestNote(project.ID, mr.IID, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr("paged note")})
	if err != nil {
		t.Fatal(err)
	}
	snippetNote, _, err := root.Notes.CreateSnippetNote(project.ID, snippet.ID, &gitlab.CreateSnippetNoteOptions{Body: gitlab.Ptr("paged note")})
	if err != nil {
		t.Fatal(err)
	}
	// Hook delivery logs need a project hook and a system hook (.invalid
	// never resolves: nothing is delivered anywhere).
	projectHook, _, err := root.Projects.AddProjectHook(project.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr("http://paged.invalid/hook")})
	if err != nil {
		t.Fatal(err)
	}
	systemHook, _, err := root.SystemHooks.AddHook(&gitlab.AddHookOptions{URL: gitlab.Ptr("http://paged.invalid/system")})
	if err != nil {
		t.Fatal(err)
	}
	// A runner's job list needs a runner (registered with the project's token).
	runner, _, err := root.Runners.RegisterNewRunner(&gitlab.RegisterNewRunnerOptions{Token: gitlab.Ptr(project.RunnersToken),
		Description: gitlab.Ptr("paged runner")})
	if err != nil {
		t.Fatal(err)
	}
	// A schedule's pipelines list needs a schedule.
	schedule, _, err := root.PipelineSchedules.CreatePipelineSchedule(project.ID, &gitlab.CreatePipelineScheduleOptions{
		Description: gitlab.Ptr("paged schedule"), Ref: gitlab.Ptr("master"), Cron: gitlab.Ptr("0 1 * * *")})
	if err != nil {
		t.Fatal(err)
	}
	// The push makes a pipeline (through the outbox): pipeline paths need it.
	var pipelineID int64
	for deadline := time.Now().Add(10 * time.Second); pipelineID == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no pipeline for the pushed .gitlab-ci.yml")
		}
		if ps, _, err := root.Pipelines.ListProjectPipelines(project.ID, nil); err == nil && len(ps) > 0 {
			pipelineID = ps[0].ID
		}
	}

	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Headers map[string]any `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	srv.JSON(t, http.MethodGet, "/api/v4/openapi.json", nil, &doc)
	var lists []string
	for path, ops := range doc.Paths {
		for _, r := range ops["get"].Responses {
			if _, ok := r.Headers["X-Total"]; ok {
				lists = append(lists, path)
				break
			}
		}
	}
	sort.Strings(lists)
	if len(lists) < 20 {
		t.Fatalf("found only %d list endpoints in the OpenAPI document: %v", len(lists), lists)
	}
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	fill := func(path string) string {
		return param.ReplaceAllStringFunc(path, func(p string) string {
			switch {
			case p == "{sha}":
				return commit.ID
			case p == "{tag_name}":
				return "v1"
			case p == "{pipeline_schedule_id}":
				return strconv.FormatInt(schedule.ID, 10)
			case p == "{pipeline_id}":
				return strconv.FormatInt(pipelineID, 10)
			case p == "{issue_iid}":
				return strconv.FormatInt(issue.IID, 10)
			case p == "{milestone_id}" && strings.HasPrefix(path, "/api/v4/groups/"):
				return strconv.FormatInt(groupMilestone.ID, 10)
			case p == "{milestone_id}":
				return strconv.FormatInt(milestone.ID, 10)
			case p == "{snippet_id}":
				return strconv.FormatInt(snippet.ID, 10)
			case p == "{hook_id}" && strings.HasPrefix(path, "/api/v4/hooks/"):
				return strconv.FormatInt(systemHook.ID, 10)
			case p == "{hook_id}":
				return strconv.FormatInt(projectHook.ID, 10)
			case strings.HasPrefix(path, "/api/v4/runners/"):
				return strconv.FormatInt(runner.ID, 10)
			case p == "{note_id}" && strings.Contains(path, "/issues/"):
				return strconv.FormatInt(issueNote.ID, 10)
			case p == "{note_id}" && strings.Contains(path, "/merge_requests/"):
				return strconv.FormatInt(mrNote.ID, 10)
			case p == "{note_id}" && strings.Contains(path, "/snippets/"):
				return strconv.FormatInt(snippetNote.ID, 10)
			case p == "{merge_request_iid}":
				return strconv.FormatInt(mr.IID, 10)
			case p == "{user_id}", strings.HasPrefix(path, "/api/v4/users/"):
				return "1"
			case strings.HasPrefix(path, "/api/v4/groups/"):
				return strconv.FormatInt(group.ID, 10)
			}
			return strconv.FormatInt(project.ID, 10)
		})
	}
	const maxInt = "9223372036854775807"
	for _, path := range lists {
		url := fill(path)
		for _, q := range []struct {
			query                 string
			wantPage, wantPer     int
			wantEmpty, checkFirst bool
		}{
			{query: "page=" + maxInt + "&per_page=100", wantPage: api.MaxPage, wantPer: 100, wantEmpty: true},
			{query: "page=" + maxInt + "&per_page=" + maxInt, wantPage: api.MaxPage, wantPer: 100, wantEmpty: true},
			{query: "page=" + strconv.Itoa(api.MaxPage) + "&per_page=100", wantPage: api.MaxPage, wantPer: 100, wantEmpty: true},
			{query: "page=1&per_page=" + maxInt, wantPage: 1, wantPer: 100, checkFirst: true},
			{query: "page=-" + maxInt + "&per_page=-" + maxInt, wantPage: 1, wantPer: api.DefaultPerPage, checkFirst: true},
		} {
			what := "GET " + url + "?" + q.query
			resp, raw := srv.JSON(t, http.MethodGet, url+"?"+q.query, nil, nil, "PRIVATE-TOKEN", srv.RootToken)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: %d %s", what, resp.StatusCode, raw)
				continue
			}
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil || items == nil {
				t.Errorf("%s: not a JSON array: %s", what, raw)
				continue
			}
			if q.wantEmpty && len(items) != 0 {
				t.Errorf("%s: %d items on a page past the end: %s", what, len(items), raw)
			}
			h := resp.Header
			if got := h.Get("X-Page"); got != strconv.Itoa(q.wantPage) {
				t.Errorf("%s: X-Page %q, want %d", what, got, q.wantPage)
			}
			if got := h.Get("X-Per-Page"); got != strconv.Itoa(q.wantPer) {
				t.Errorf("%s: X-Per-Page %q, want %d", what, got, q.wantPer)
			}
			if q.wantEmpty && h.Get("X-Next-Page") != "" {
				t.Errorf("%s: X-Next-Page %q past the end", what, h.Get("X-Next-Page"))
			}
			if q.checkFirst && h.Get("X-Prev-Page") != "" {
				t.Errorf("%s: X-Prev-Page %q on page 1", what, h.Get("X-Prev-Page"))
			}
			// A total is a number or absent: python-gitlab reads a present
			// X-Total with int(), and an empty value (sent by the open
			// commit lists before) made project.commits.list() raise.
			for _, name := range []string{"X-Total", "X-Total-Pages"} {
				if vs, ok := h[name]; ok && (len(vs) != 1 || vs[0] == "") {
					t.Errorf("%s: %s present but %q", what, name, vs)
				}
			}
			// Every number a client would follow is a page that exists in
			// our range: nothing wrapped around.
			for _, name := range []string{"X-Next-Page", "X-Prev-Page", "X-Total", "X-Total-Pages"} {
				if v := h.Get(name); v != "" {
					if n, err := strconv.Atoi(v); err != nil || n < 0 || n > api.MaxPage {
						t.Errorf("%s: %s %q", what, name, v)
					}
				}
			}
			for _, m := range regexp.MustCompile(`[?&]page=([^&>]*)`).FindAllStringSubmatch(h.Get("Link"), -1) {
				if n, err := strconv.Atoi(m[1]); err != nil || n < 1 || n > api.MaxPage {
					t.Errorf("%s: Link page %q in %s", what, m[1], h.Get("Link"))
				}
			}
			if !strings.Contains(h.Get("Link"), `rel="first"`) {
				t.Errorf("%s: Link %q has no rel=first", what, h.Get("Link"))
			}
		}
	}
}
