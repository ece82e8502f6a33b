package notifications_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
)

// The walk's story, told twice: through the API in project viaapi and
// through the pages, in Chromium, in project viapages. Both projects are
// root's, with the same members, and the same commits are pushed to each
// with the git CLI.
//
// a. The Developer opens an issue; the Reporter comments on it; the
// Developer pushes "Fixes #1" to master, which closes it.
// b. The Developer pushes a branch and opens a merge request from it; the
// Master comments on a line of its diff; the Developer pushes a fix that
// changes the line (the comment is then outdated); the Master sets the
// merge to happen when the pipeline succeeds; the pipeline passes on the
// shell executor and the merge request is merged.
const (
	walkIssueTitle = "The fox is slow"
	// walkIssueText carries a script a page must render inert: the
	// Markdown renderer drops it, so it reaches neither the DOM nor the
	// browser's title.
	walkIssueText  = "It *should* be quick. <script>document.title = 'owned'</script>"
	walkComment    = "Seen it too, @dev: it takes *minutes*."
	walkLineNote   = "Greet the whole world?"
	walkMRTitle    = "Say hello"
	walkMRText     = "Greets the world."
	walkGreetLine  = 6 // main.go's Println line, the one commented on
	walkFeature    = "feature"
	walkFixMessage = "Quicken the fox\n\nFixes #1"
)

// walkMain is main.go printing greeting; its line walkGreetLine is the
// Println.
func walkMain(greeting string) string {
	return "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"" + greeting + "\")\n}\n"
}

// walkPipeline is the CI configuration of the feature branch: its job
// waits (at most a minute) for a gate file named after the commit, so the
// test holds a pipeline running while the Master sets the automatic
// merge; on other branches it passes at once.
func walkPipeline(gates string) string {
	return fmt.Sprintf("test:\n  script:\n    - 'if [ \"$CI_COMMIT_REF_NAME\" = %s ]; then for i in $(seq 1200); do [ -f %s/$CI_COMMIT_SHA ] && exit 0; sleep 0.05; done; exit 1; fi'\n",
		walkFeature, gates)
}

// walkPeople are the story's users besides root: a Developer, a Reporter,
// a Master (Maintainer) and a Reporter who watches the projects (a Guest
// would not see the merge requests of a private project).
type walkPeople struct {
	dev, rep, master, watcher *fennectest.User
}

// walkStory is one telling of the story in its own project.
type walkStory struct {
	name  string // the project's name and path under root
	p     *gitlab.Project
	hooks *walkHooks
	work  *walkClone // the Developer's working copy
	gates string
}

// TestCollaborationWalkInChromium tells the story of issue 29 through the
// pages, in headless Chromium, as three users side by side (each signed
// in through the page in a browser context of their own), while the same
// story is told through the API in another project: both must end the
// same way (the issue closed by the commit, the merge request merged after
// its pipeline passed on the shell executor), and send the same mails (by
// kind, subject and recipients) and webhooks (by event, kind and action or
// status). Every page kind on the way is checked with axe-core and
// screenshot.
func TestCollaborationWalkInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	e := start(t, fennectest.WithConfig(func(c *config.Config) {
		c.AllowLocalRequests = true
		c.PluginDir = shellExecutor(t)
	}))
	shots := chrome.Artifacts(t, "collaboration-walk")
	gates := t.TempDir()
	people := walkPeople{dev: e.CreateUser(t, "dev"), rep: e.CreateUser(t, "rep"), master: e.CreateUser(t, "master"), watcher: e.CreateUser(t, "watcher")}
	stories := map[string]*walkStory{}
	for _, name := range []string{"viaapi", "viapages"} {
		s := &walkStory{name: name, p: e.project(t, e.Client, name, "private"), gates: gates}
		e.member(t, s.p, people.dev, gitlab.DeveloperPermissions)
		e.member(t, s.p, people.rep, gitlab.ReporterPermissions)
		e.member(t, s.p, people.master, gitlab.MaintainerPermissions)
		e.member(t, s.p, people.watcher, gitlab.ReporterPermissions)
		if _, _, err := people.watcher.Client.NotificationSettings.UpdateSettingsForProject(s.p.ID, &gitlab.NotificationSettingsOptions{
			Level: gitlab.Ptr(gitlab.WatchNotificationLevel)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Client.Commits.CreateCommit(s.p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
			CommitMessage: gitlab.Ptr("Start"), Actions: []*gitlab.CommitActionOptions{
				{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("main.go"), Content: gitlab.Ptr(walkMain("hi"))},
				{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("FOX.md"), Content: gitlab.Ptr("The fox.\n")}}}); err != nil {
			t.Fatal(err)
		}
		s.work = e.walkClone(t, people.dev, "root/"+name)
		s.hooks = newWalkHooks(t)
		if _, _, err := e.Client.Projects.AddProjectHook(s.p.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr(s.hooks.srv.URL),
			PushEvents: gitlab.Ptr(true), IssuesEvents: gitlab.Ptr(true), MergeRequestsEvents: gitlab.Ptr(true), NoteEvents: gitlab.Ptr(true),
			PipelineEvents: gitlab.Ptr(true), JobEvents: gitlab.Ptr(true)}); err != nil {
			t.Fatal(err)
		}
		stories[name] = s
	}
	e.settle(t)
	e.smtp.mu.Lock()
	e.smtp.got = nil
	e.smtp.mu.Unlock()

	// One after the other: the API's story takes a few seconds, and
	// parallel subtests would wait for the package's other tests first.
	t.Run("api", func(t *testing.T) { e.walkAPI(t, stories["viaapi"], people) })
	t.Run("pages", func(t *testing.T) { e.walkPages(t, b, shots, stories["viapages"], people) })
	if t.Failed() {
		return
	}
	e.settle(t)

	// The mails, by kind (the Message-ID without its numbers), subject
	// (without the project's name, a pipeline's id or a commit) and
	// recipients.
	mails := map[string][]string{}
	for _, m := range e.smtp.mails() {
		key := ""
		for name := range stories {
			if strings.Contains(m.Subject, name) {
				key = name
			}
		}
		if key == "" {
			t.Errorf("a mail of neither story: %q", m.Subject)
			continue
		}
		mails[key] = append(mails[key], fmt.Sprintf("%s: %s -> %s", walkNumbers.ReplaceAllString(m.Header.Get("Message-ID"), "N"),
			walkNormal(m.Subject, key), strings.Join(m.To, ",")))
	}
	for k := range mails {
		slices.Sort(mails[k])
	}
	t.Logf("mails: %q", mails["viapages"])
	if !slices.Equal(mails["viaapi"], mails["viapages"]) {
		t.Errorf("the mails differ:\n%s", fennectest.LineDiff(strings.Join(mails["viaapi"], "\n"), strings.Join(mails["viapages"], "\n")))
	}
	// Every kind the story must mail is there: the new issue, the
	// comments, the close, the new merge request and the merge.
	for _, want := range []string{"<issue_N@", "<note_N@", "<issue_N_close_N@", "<merge_request_N@", "<merge_request_N_merge_N@"} {
		if !slices.ContainsFunc(mails["viapages"], func(m string) bool { return strings.Contains(m, want) }) {
			t.Errorf("no mail %s among %q", want, mails["viapages"])
		}
	}
	fennectest.Poll(t, 30*time.Second, func() (bool, string) {
		a, p := stories["viaapi"].hooks.events(), stories["viapages"].hooks.events()
		return len(a) > 0 && slices.Equal(a, p), "the webhooks differ:\n" + fennectest.LineDiff(strings.Join(a, "\n"), strings.Join(p, "\n"))
	})
	t.Logf("webhooks: %q", stories["viapages"].hooks.events())
	for _, want := range []string{"Issue Hook issue close", "Merge Request Hook merge_request merge", "Note Hook note DiffNote MergeRequest",
		"Pipeline Hook pipeline success", "Push Hook push"} {
		if !slices.ContainsFunc(stories["viapages"].hooks.events(), func(h string) bool { return strings.HasPrefix(h, want) }) {
			t.Errorf("no webhook %q", want)
		}
	}
}

var (
	walkNumbers      = regexp.MustCompile(`[0-9]+`)
	walkPipelineID   = regexp.MustCompile(`Pipeline #[0-9]+`)
	walkSubjectShort = regexp.MustCompile(`\| [0-9a-f]{8}$`)
)

// walkNormal is a mail subject without what differs between the stories
// by nature: the project's name, a pipeline's id, a commit.
func walkNormal(subject, project string) string {
	subject = strings.ReplaceAll(subject, project, "P")
	subject = walkPipelineID.ReplaceAllString(subject, "Pipeline #N")
	return walkSubjectShort.ReplaceAllString(subject, "| SHA")
}

// walkAPI tells the story through the API.
func (e *env) walkAPI(t *testing.T, s *walkStory, people walkPeople) {
	is, _, err := people.dev.Client.Issues.CreateIssue(s.p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(walkIssueTitle), Description: gitlab.Ptr(walkIssueText)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := people.rep.Client.Notes.CreateIssueNote(s.p.ID, is.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr(walkComment)}); err != nil {
		t.Fatal(err)
	}
	e.walkCloseByCommit(t, s, people)

	first := s.pushFeature(t)
	mr, _, err := people.dev.Client.MergeRequests.CreateMergeRequest(s.p.ID, &gitlab.CreateMergeRequestOptions{SourceBranch: gitlab.Ptr(walkFeature),
		TargetBranch: gitlab.Ptr("master"), Title: gitlab.Ptr(walkMRTitle), Description: gitlab.Ptr(walkMRText)})
	if err != nil {
		t.Fatal(err)
	}
	walkHead(t, people.master.Client, s.p.ID, mr.IID, first)
	// The merge request's view has no diff_refs yet: the target's head,
	// where the branch started, is both the base and the start.
	start := s.work.git("rev-parse", "master")
	if _, _, err := people.master.Client.Discussions.CreateMergeRequestDiscussion(s.p.ID, mr.IID, &gitlab.CreateMergeRequestDiscussionOptions{
		Body: gitlab.Ptr(walkLineNote), Position: &gitlab.PositionOptions{BaseSHA: gitlab.Ptr(start), StartSHA: gitlab.Ptr(start),
			HeadSHA: gitlab.Ptr(first), PositionType: gitlab.Ptr("text"), OldPath: gitlab.Ptr("main.go"), NewPath: gitlab.Ptr("main.go"),
			NewLine: gitlab.Ptr(int64(walkGreetLine))}}); err != nil {
		t.Fatal(err)
	}
	fix := s.pushFix(t)
	walkHead(t, people.master.Client, s.p.ID, mr.IID, fix)
	walkOutdatedPosition(t, people.master.Client, s.p.ID, mr.IID, first)
	walkPipelineStatus(t, people.master.Client, s.p.ID, fix, "created", "pending", "running")
	code, _, body := e.call(t, people.master.Token, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/merge_requests/%d/merge", s.p.ID, mr.IID),
		fmt.Sprintf(`{"merge_when_pipeline_succeeds": true, "sha": %q}`, fix))
	if code != http.StatusOK {
		t.Fatalf("merge when pipeline succeeds: %d %s", code, body)
	}
	e.walkFinish(t, s, people, mr.IID, fix)
}

// walkPages tells the story through the pages, as three people each in a
// browser context of their own.
func (e *env) walkPages(t *testing.T, b *chrome.Browser, shots string, s *walkStory, people walkPeople) {
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// look checks the page kind with axe-core and screenshots it.
	look := func(tab context.Context, kind string) {
		t.Helper()
		chrome.Screenshot(t, tab, shots, strings.ReplaceAll(kind, " ", "-")+".png")
		chrome.CheckAccessibility(t, tab, kind)
	}
	dev, rep, master := b.Tab(t), b.Tab(t), b.Tab(t)
	must("sign-in page", chromedp.Do(dev, chromedp.Navigate(e.URL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`))))
	look(dev, "sign in")
	chrome.SignIn(t, dev, e.URL, people.dev.Username, people.dev.Password)
	chrome.SignIn(t, rep, e.URL, people.rep.Username, people.rep.Password)
	chrome.SignIn(t, master, e.URL, people.master.Username, people.master.Password)
	base := e.URL + "/root/" + s.name

	// a. The Developer opens the issue from the New issue page.
	must("new issue", chromedp.Do(dev, chromedp.Navigate(base+"/-/issues/new"), chromedp.WaitVisible(chromedp.CSS("#issue-title"))))
	look(dev, "new issue")
	must("create the issue", chromedp.Do(dev, chromedp.SendKeys(chromedp.CSS("#issue-title"), walkIssueTitle),
		chromedp.SendKeys(chromedp.CSS("#issue-description"), walkIssueText),
		chromedp.Click(chromedp.CSS(`form.issue-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#note-body"))))
	walkWant(t, dev, "the new issue", "main h1", walkIssueTitle)
	// The script in the description is text: no element, no effect.
	inert, err := chromedp.Run(dev, chromedp.Evaluate[bool](`document.querySelector('main script') === null && document.title !== 'owned'`))
	if err != nil || !inert {
		t.Errorf("the issue's description ran or kept its script (%v)", err)
	}
	walkWant(t, dev, "the new issue", `section[aria-label="Description"]`, "It should be quick.")

	// The Reporter previews a comment, then posts it.
	must("the issue, as the Reporter", chromedp.Do(rep, chromedp.Navigate(base+"/-/issues/1"), chromedp.WaitVisible(chromedp.CSS("#note-body"))))
	must("preview", chromedp.Do(rep, chromedp.SendKeys(chromedp.CSS("#note-body"), walkComment),
		chromedp.Click(chromedp.CSS(`form.comment button[name="preview"]`)), chromedp.WaitVisible(chromedp.CSS(`section[aria-label="Preview"]`))))
	preview, err := chromedp.Run(rep, chromedp.InnerHTML(chromedp.CSS(`section[aria-label="Preview"] .markdown`)))
	if err != nil || !strings.Contains(preview, "<em>minutes</em>") {
		t.Errorf("the preview reads %q (%v)", preview, err)
	}
	draft, err := chromedp.Run(rep, chromedp.Value(chromedp.CSS("#note-body")))
	if err != nil || draft != walkComment {
		t.Errorf("the draft after the preview is %q (%v)", draft, err)
	}
	look(rep, "issue with a comment preview")
	must("comment", chromedp.Do(rep, chromedp.Click(chromedp.CSS(`form.comment button:not([name])`)), chromedp.WaitVisible(chromedp.CSS("li.note"))))
	walkWant(t, rep, "the comment", "li.note .markdown", "Seen it too, @dev: it takes minutes.")

	// The Developer closes it with a commit; the Reporter's page shows it.
	fixSHA := e.walkCloseByCommit(t, s, people)
	must("the closed issue", chromedp.Do(rep, chromedp.Navigate(base+"/-/issues/1"), chromedp.WaitVisible(chromedp.CSS(".state-closed"))))
	walkWant(t, rep, "the closed issue", "ol.timeline", "closed via commit "+fixSHA[:8])
	look(rep, "closed issue")

	// b. The Developer pushes a branch and opens a merge request from the
	// New merge request page: the title and description are the commit's.
	first := s.pushFeature(t)
	must("new merge request", chromedp.Do(dev, chromedp.Navigate(base+"/-/merge_requests/new"), chromedp.WaitVisible(chromedp.CSS("#mr-source"))))
	look(dev, "new merge request")
	must("compare", chromedp.Do(dev, chromedp.SendKeys(chromedp.CSS("#mr-source"), walkFeature),
		chromedp.Click(chromedp.CSS(`form.filter button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#mr-title"))))
	title, err := chromedp.Run(dev, chromedp.Value(chromedp.CSS("#mr-title")))
	must("the title", err)
	text, err := chromedp.Run(dev, chromedp.Value(chromedp.CSS("#mr-description")))
	must("the description", err)
	if title != walkMRTitle || text != walkMRText {
		t.Errorf("the form is prefilled with %q, %q; want the commit's %q, %q", title, text, walkMRTitle, walkMRText)
	}
	look(dev, "new merge request compared")
	// Its diffs scroll sideways (the pipeline's long line): each must be
	// reachable with the keyboard.
	chrome.CheckKeyboard(t, dev, "new merge request compared")
	must("create the merge request", chromedp.Do(dev, chromedp.Click(chromedp.CSS(`#new-merge-request button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#merge-box"))))
	walkWant(t, dev, "the new merge request", "main h1", walkMRTitle)

	// The Master comments on the greeting line on the Changes tab.
	walkHead(t, people.master.Client, s.p.ID, 1, first)
	must("changes", chromedp.Do(master, chromedp.Navigate(base+"/-/merge_requests/1/diffs"), chromedp.WaitVisible(chromedp.CSS("table.code"))))
	look(master, "merge request changes")
	// The first added line of main.go (the branch adds .gitlab-ci.yml
	// too) is marked, then clicked like any link.
	marked, err := chromedp.Run(master, chromedp.Evaluate[bool](`(() => {
  for (const d of document.querySelectorAll('details.diff')) {
    const a = d.querySelector('summary').textContent.includes('main.go') && d.querySelector('tr.add td.line-action a');
    if (a) { a.dataset.walk = 'greeting'; return true }
  }
  return false })()`))
	if err != nil || !marked {
		t.Fatalf("no link to comment on an added line of main.go (%v)", err)
	}
	must("line form", chromedp.Do(master, chromedp.Click(chromedp.CSS(`a[data-walk="greeting"]`)), chromedp.WaitVisible(chromedp.CSS("#line-note"))))
	walkWant(t, master, "the line form", `label[for="line-note"]`, fmt.Sprintf("main.go line %d", walkGreetLine))
	look(master, "merge request changes with a line form")
	must("line comment", chromedp.Do(master, chromedp.SendKeys(chromedp.CSS("#line-note"), walkLineNote),
		chromedp.Click(chromedp.CSS(`#line-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("tr.line-comments li.note"))))
	walkWant(t, master, "the line comment", "tr.line-comments li.note", walkLineNote)
	look(master, "merge request changes with a line comment")

	// The Developer's fix changes that line: the comment is outdated.
	fix := s.pushFix(t)
	walkHead(t, people.master.Client, s.p.ID, 1, fix)
	walkOutdatedPosition(t, people.master.Client, s.p.ID, 1, first)
	must("changes after the fix", chromedp.Do(master, chromedp.Navigate(base+"/-/merge_requests/1/diffs"), chromedp.WaitVisible(chromedp.CSS("table.code"))))
	walkWant(t, master, "the changes after the fix", "main", "1 outdated comment")
	if n, err := chromedp.Run(master, chromedp.Evaluate[int](`document.querySelectorAll('tr.line-comments li.note').length`)); err != nil || n != 0 {
		t.Errorf("the outdated comment still shows on %d lines of the changes (%v)", n, err)
	}

	// The Master sets the merge to happen when the pipeline succeeds.
	walkPipelineStatus(t, people.master.Client, s.p.ID, fix, "created", "pending", "running")
	must("overview", chromedp.Do(master, chromedp.Navigate(base+"/-/merge_requests/1"),
		chromedp.WaitVisible(chromedp.CSS(`form.merge-form button[name="merge_when_pipeline_succeeds"]`))))
	walkWant(t, master, "the outdated thread", "li.thread header.line-ref", "outdated commented on an old version of main.go")
	walkWant(t, master, "the outdated thread", "li.thread", walkLineNote)
	look(master, "merge request with an outdated thread and a running pipeline")
	must("merge when pipeline succeeds", chromedp.Do(master, chromedp.Click(chromedp.CSS(`form.merge-form button[name="merge_when_pipeline_succeeds"]`))))
	walkWait(t, master, "the automatic merge set", `(document.querySelector('#merge-box') || {}).textContent.includes('Set to be merged automatically when the pipeline succeeds.')`)
	look(master, "merge request set to merge automatically")
	e.walkFinish(t, s, people, 1, fix)
	must("merged", chromedp.Do(master, chromedp.Navigate(base+"/-/merge_requests/1"), chromedp.WaitVisible(chromedp.CSS(".state-merged"))))
	walkWant(t, master, "the merged merge request", "#merge-box", "Merged by User master")
	look(master, "merged merge request")
	must("pipelines", chromedp.Do(master, chromedp.Navigate(base+"/-/merge_requests/1/pipelines"), chromedp.WaitVisible(chromedp.CSS("main h1"))))
	walkWant(t, master, "the merge request's pipelines", "main", "success")
	look(master, "merge request pipelines")
}

// walkCloseByCommit pushes a commit saying "Fixes #1" to master as the
// Developer and waits until the issue is closed; it returns the commit.
func (e *env) walkCloseByCommit(t *testing.T, s *walkStory, people walkPeople) string {
	t.Helper()
	sha := s.work.commit(walkFixMessage, map[string]string{"FOX.md": "The quick fox.\n"})
	s.work.git("push", "-q", "origin", "master")
	fennectest.Poll(t, 30*time.Second, func() (bool, string) {
		is, _, err := people.rep.Client.Issues.GetIssue(s.p.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		return is.State == "closed", "the issue is " + is.State + " after the push of " + sha
	})
	notes, _, err := people.rep.Client.Notes.ListIssueNotes(s.p.ID, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(notes, func(n *gitlab.Note) bool {
		return n.System && n.Body == "closed via commit "+sha && n.Author.Username == people.dev.Username
	}) {
		t.Errorf("no system note that the Developer's commit %s closed the issue", sha)
	}
	return sha
}

// walkFinish lets the pipeline of fix pass and waits until the merge
// request is merged by the Master, and the pipeline of its merge commit
// has passed too.
func (e *env) walkFinish(t *testing.T, s *walkStory, people walkPeople, iid int64, fix string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.gates, fix), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	walkPipelineStatus(t, people.master.Client, s.p.ID, fix, "success")
	var mr *gitlab.MergeRequest
	fennectest.Poll(t, 30*time.Second, func() (bool, string) {
		var err error
		mr, _, err = people.master.Client.MergeRequests.GetMergeRequest(s.p.ID, iid, nil)
		if err != nil {
			t.Fatal(err)
		}
		return mr.State == "merged", "the merge request is " + mr.State
	})
	if mr.MergedBy == nil || mr.MergedBy.Username != people.master.Username || mr.MergeCommitSHA == "" {
		t.Fatalf("merged by %+v, merge commit %q", mr.MergedBy, mr.MergeCommitSHA)
	}
	walkPipelineStatus(t, people.master.Client, s.p.ID, mr.MergeCommitSHA, "success")
}

// walkHead waits until the merge request's head is sha (its pipeline
// and diff are then those of sha).
func walkHead(t *testing.T, c *gitlab.Client, project, iid int64, sha string) {
	t.Helper()
	fennectest.Poll(t, 30*time.Second, func() (bool, string) {
		mr, _, err := c.MergeRequests.GetMergeRequest(project, iid, nil)
		if err != nil {
			t.Fatal(err)
		}
		return mr.SHA == sha, fmt.Sprintf("the merge request's head is %q, want %s", mr.SHA, sha)
	})
}

// walkOutdatedPosition checks through the discussions API that the line
// comment keeps the position it was made at: the greeting line of the
// first head.
func walkOutdatedPosition(t *testing.T, c *gitlab.Client, project, iid int64, head string) {
	t.Helper()
	threads, _, err := c.Discussions.ListMergeRequestDiscussions(project, iid, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range threads {
		if n := d.Notes[0]; n.Type == gitlab.DiffNote {
			if n.Body != walkLineNote || n.Position == nil || n.Position.NewPath != "main.go" || n.Position.NewLine != walkGreetLine ||
				n.Position.HeadSHA != head {
				t.Errorf("the line comment: %q at %+v; want main.go line %d of %s", n.Body, n.Position, walkGreetLine, head)
			}
			return
		}
	}
	t.Errorf("no line comment in the discussions")
}

// walkPipelineStatus waits until the pipeline of sha has one of the
// statuses.
func walkPipelineStatus(t *testing.T, c *gitlab.Client, project int64, sha string, want ...string) {
	t.Helper()
	fennectest.Poll(t, 60*time.Second, func() (bool, string) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{SHA: gitlab.Ptr(sha)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if slices.Contains(want, p.Status) {
				return true, ""
			}
			if p.Status == "failed" {
				t.Fatalf("the pipeline of %s failed", sha)
			}
		}
		return false, fmt.Sprintf("the pipelines of %s: %d, none %v", sha, len(list), want)
	})
}

// walkWant fails the test unless the text of the tab's element sel
// contains want, any run of white space read as one space (the browser
// breaks the text of inline blocks such as badges).
func walkWant(t *testing.T, tab context.Context, what, sel, want string) {
	t.Helper()
	got, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
	got = strings.Join(strings.Fields(got), " ")
	if err != nil || !strings.Contains(got, want) {
		t.Errorf("%s: %s reads %q, want %q (%v)", what, sel, got, want, err)
	}
}

// walkWait polls the JavaScript condition on the tab, through a
// navigation the last action started, for 30 seconds (a loaded -race
// run of every package is slow).
func walkWait(t *testing.T, tab context.Context, what, cond string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(tab, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
	}
	t.Fatalf("%s: the page never showed it", what)
}

// pushFeature commits the greeting and the pipeline on a new branch and
// pushes it; its pipeline may pass at once.
func (s *walkStory) pushFeature(t *testing.T) string {
	t.Helper()
	s.work.git("checkout", "-q", "-b", walkFeature)
	sha := s.work.commit(walkMRTitle+"\n\n"+walkMRText, map[string]string{"main.go": walkMain("hello"), ".gitlab-ci.yml": walkPipeline(s.gates)})
	if err := os.WriteFile(filepath.Join(s.gates, sha), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.work.git("push", "-q", "origin", walkFeature)
	return sha
}

// pushFix changes the commented line; its pipeline waits for its gate.
func (s *walkStory) pushFix(t *testing.T) string {
	t.Helper()
	sha := s.work.commit("Greet everyone", map[string]string{"main.go": walkMain("hello, world")})
	s.work.git("push", "-q", "origin", walkFeature)
	return sha
}

// walkClone is a working copy of a project, as a user, with the git CLI
// over HTTP and a home of its own.
type walkClone struct {
	t         testing.TB
	home, dir string
}

func (e *env) walkClone(t testing.TB, u *fennectest.User, path string) *walkClone {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	base, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := &walkClone{t: t, home: t.TempDir(), dir: filepath.Join(t.TempDir(), "w")}
	remote := "http://" + u.Username + ":" + u.Token + "@" + base.Host + "/" + path + ".git"
	c.run(filepath.Dir(c.dir), "clone", "-q", remote, c.dir)
	return c
}

func (c *walkClone) git(args ...string) string {
	c.t.Helper()
	return c.run(c.dir, args...)
}

func (c *walkClone) run(dir string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+c.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=Dev",
		"GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.com", "NO_PROXY=*", "no_proxy=*")
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes the files (path -> content) and commits them.
func (c *walkClone) commit(msg string, files map[string]string) string {
	c.t.Helper()
	for p, content := range files {
		if err := os.WriteFile(filepath.Join(c.dir, p), []byte(content), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.git("add", "-A")
	c.git("commit", "-q", "-m", msg)
	return c.git("rev-parse", "HEAD")
}

// walkHooks is a real HTTP server that records the webhooks it receives,
// each as "<X-Gitlab-Event> <object_kind> <what>", what being the action
// (issues, merge requests), the status (pipelines, jobs) or the note's
// type and target; events returns them sorted, the order of a story's
// asynchronous deliveries being no part of it.
type walkHooks struct {
	mu  sync.Mutex
	got []string
	srv *httptest.Server
}

func newWalkHooks(t *testing.T) *walkHooks {
	h := &walkHooks{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var v struct {
			Kind  string `json:"object_kind"`
			Attrs struct {
				Action       string `json:"action"`
				Status       string `json:"status"`
				Type         string `json:"type"`
				NoteableType string `json:"noteable_type"`
			} `json:"object_attributes"`
			BuildStatus string `json:"build_status"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			v.Kind = "unreadable: " + err.Error()
		}
		what := []string{r.Header.Get("X-Gitlab-Event"), v.Kind, v.Attrs.Action, v.Attrs.Status, v.Attrs.Type, v.Attrs.NoteableType, v.BuildStatus}
		h.mu.Lock()
		h.got = append(h.got, strings.Join(slices.DeleteFunc(what, func(s string) bool { return s == "" }), " "))
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *walkHooks) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.got)
	slices.Sort(out)
	return out
}
