package stocktest

// Fixtures every module's black-box tests build: a project, a member, a
// commit of files, an issue, a merge request, and jobs that finish at once
// on an in-process executor. Each goes through the API with client-go, as
// a user would, and fails the test when the server refuses it.

import (
	"context"
	"io"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// NewProject creates a project named name with visibility (private,
// internal or public) as c's user.
func NewProject(t testing.TB, c *gitlab.Client, name, visibility string) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(visibility))})
	if err != nil {
		t.Fatalf("stocktest: create project %s: %v", name, err)
	}
	return p
}

// AddMember makes user a member of project at level.
func AddMember(t testing.TB, c *gitlab.Client, project, user int64, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := c.ProjectMembers.AddProjectMember(project, &gitlab.AddProjectMemberOptions{UserID: user, AccessLevel: &level}); err != nil {
		t.Fatalf("stocktest: add member %d to project %d: %v", user, project, err)
	}
}

// CommitFiles commits files (path -> content; created or updated) to
// branch in one commit.
func CommitFiles(t testing.TB, c *gitlab.Client, project int64, branch, message string, files map[string]string) *gitlab.Commit {
	t.Helper()
	var actions []*gitlab.CommitActionOptions
	for path, content := range files {
		action := gitlab.FileCreate
		if _, _, err := c.RepositoryFiles.GetFile(project, path, &gitlab.GetFileOptions{Ref: gitlab.Ptr(branch)}); err == nil {
			action = gitlab.FileUpdate
		}
		actions = append(actions, &gitlab.CommitActionOptions{Action: gitlab.Ptr(action), FilePath: gitlab.Ptr(path), Content: gitlab.Ptr(content)})
	}
	commit, _, err := c.Commits.CreateCommit(project, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr(branch),
		CommitMessage: gitlab.Ptr(message), Actions: actions})
	if err != nil {
		t.Fatalf("stocktest: commit to %s of project %d: %v", branch, project, err)
	}
	return commit
}

// NewIssue opens an issue titled title.
func NewIssue(t testing.TB, c *gitlab.Client, project int64, title string) *gitlab.Issue {
	t.Helper()
	i, _, err := c.Issues.CreateIssue(project, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(title)})
	if err != nil {
		t.Fatalf("stocktest: create issue %q: %v", title, err)
	}
	return i
}

// OpenMergeRequest opens a merge request of source into target.
func OpenMergeRequest(t testing.TB, c *gitlab.Client, project int64, source, target, title string) *gitlab.MergeRequest {
	t.Helper()
	mr, _, err := c.MergeRequests.CreateMergeRequest(project, &gitlab.CreateMergeRequestOptions{
		SourceBranch: gitlab.Ptr(source), TargetBranch: gitlab.Ptr(target), Title: gitlab.Ptr(title)})
	if err != nil {
		t.Fatalf("stocktest: open merge request %s -> %s: %v", source, target, err)
	}
	return mr
}

// WithInstantExecutor gives the server an in-process executor
// (fennec.WithExecutor) that takes every job: it writes each script line
// to the trace as "$ line" and succeeds, unless a line is "exit N" with N
// not 0, which fails the job. Pipelines finish in milliseconds, with no
// plugin process and no shell.
func WithInstantExecutor() fennectest.Option {
	return fennectest.WithOptions(fennec.WithExecutor("instant", instantExecutor{}))
}

type instantExecutor struct{}

var _ executor.Executor = instantExecutor{}

func (instantExecutor) Describe(context.Context) (plugin.Description, error) {
	return plugin.Description{Name: "instant", Version: "1", APIVersions: []string{executor.APIVersion}}, nil
}

func (instantExecutor) Configure(context.Context, []byte) error { return nil }

func (instantExecutor) Capabilities(context.Context) (executor.Capabilities, error) {
	return executor.Capabilities{RunUntagged: true, Concurrency: 4}, nil
}

func (instantExecutor) Run(_ context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error) {
	var out strings.Builder
	failed := ""
	for _, st := range job.Steps {
		for _, line := range st.Script {
			out.WriteString("$ " + line + "\n")
			if code, ok := strings.CutPrefix(strings.TrimSpace(line), "exit "); ok && code != "0" && failed == "" {
				failed = line
			}
		}
	}
	if err := trace(executor.TraceChunk{Data: []byte(out.String())}); err != nil {
		return executor.Result{}, err
	}
	if failed != "" {
		return executor.Result{ExitCode: 1, Failure: executor.FailureScript, Message: "the script ran " + failed}, nil
	}
	return executor.Result{}, nil
}

func (instantExecutor) Cancel(context.Context, int64) error { return nil }

func (instantExecutor) Artifacts(context.Context, int64, io.Writer) (int64, error) {
	return 0, executor.ErrNoArtifacts
}

func (instantExecutor) Cleanup(context.Context, int64) error { return nil }
