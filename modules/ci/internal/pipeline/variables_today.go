package pipeline

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Pipeline sources current GitLab adds to 9.x's.
const (
	SourceMergeRequestEvent Source = "merge_request_event"
	SourceParentPipeline    Source = "parent_pipeline"
	SourceChat              Source = "chat"
	SourceWebIDE            Source = "webide"
)

// ZeroSHA is CI_COMMIT_BEFORE_SHA when there is no previous commit (a new
// branch, a tag, a merge request pipeline).
const ZeroSHA = "0000000000000000000000000000000000000000"

// maxOpenMergeRequests is how many references CI_OPEN_MERGE_REQUESTS
// lists at most, as GitLab does.
const maxOpenMergeRequests = 4

// TodayFacts is what the server knows about a pipeline for the predefined
// variables of current GitLab (TodayVariables). Zero values leave out the
// variables that depend on them.
type TodayFacts struct {
	ServerURL string // http(s)://host[:port][/root]

	Source Source
	// Ref is the branch or tag the pipeline runs for; for a merge request
	// pipeline, the source branch.
	Ref       string
	IsTag     bool
	Protected bool // the ref is a protected branch or tag

	SHA             string
	BeforeSHA       string // empty or ZeroSHA: none
	CommitMessage   string
	CommitAuthor    string // "Name <email>"
	CommitTimestamp time.Time

	PipelineID        int64
	PipelineIID       int64 // zero leaves CI_PIPELINE_IID out
	PipelineCreatedAt time.Time

	ProjectPath       string // group/subgroup/project
	ProjectTitle      string // the human-readable name
	ProjectVisibility string
	DefaultBranch     string

	// OpenMergeRequests are the open merge requests of a branch pipeline's
	// branch, as references "group/project!iid"; the first four are sent.
	OpenMergeRequests []string

	// MergeRequest is set for a merge request pipeline.
	MergeRequest *MergeRequestFacts
}

// MergeRequestFacts describes the merge request of a merge request
// pipeline (CI_MERGE_REQUEST_*).
type MergeRequestFacts struct {
	ID, IID   int64
	ProjectID int64 // the target project
	// ProjectPath is the target project's full path.
	ProjectPath string
	Title       string
	Labels      []string
	Assignees   []string // usernames
	Milestone   string
	Draft       bool

	SourceBranch      string
	SourceProjectID   int64
	SourceProjectPath string
	TargetBranch      string
	TargetProtected   bool
	DiffBaseSHA       string
	// EventType is detached (a pipeline of the source branch's head),
	// merged_result or merge_train; empty is detached.
	EventType string
}

// TodayVariables returns the predefined variables current GitLab sets for
// a pipeline's jobs beyond (or restating) the 9.x set Predefined returns:
// the pipeline's source, branch or tag, default branch, protection, the
// server's URL parts, the project's root namespace and title, the commit's
// short SHA, title, description, author and time, and CI_MERGE_REQUEST_*
// for a merge request pipeline. Names both sets hold have the same value;
// merge them with AddMissing. All are public.
func TodayVariables(f TodayFacts) []Variable {
	var vars []Variable
	add := func(k, v string) { vars = append(vars, Variable{Key: k, Value: v, Public: true}) }
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	boolean := func(b bool) string { return strconv.FormatBool(b) }

	if f.Source != "" {
		add("CI_PIPELINE_SOURCE", string(f.Source))
	}
	mr := f.MergeRequest
	switch {
	case f.IsTag:
		add("CI_COMMIT_TAG", f.Ref)
	case mr == nil && f.Ref != "":
		// Merge request pipelines have no CI_COMMIT_BRANCH: rules tell
		// the two kinds of pipeline apart by it.
		add("CI_COMMIT_BRANCH", f.Ref)
	}
	if f.Ref != "" {
		add("CI_COMMIT_REF_PROTECTED", boolean(f.Protected))
	}
	if f.DefaultBranch != "" {
		add("CI_DEFAULT_BRANCH", f.DefaultBranch)
	}

	if u, err := url.Parse(strings.TrimSuffix(f.ServerURL, "/")); err == nil && u.Host != "" {
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		add("CI_SERVER_URL", u.Scheme+"://"+u.Host+u.Path)
		add("CI_SERVER_HOST", u.Hostname())
		add("CI_SERVER_PORT", port)
		add("CI_SERVER_PROTOCOL", u.Scheme)
		add("CI_SERVER_FQDN", u.Host)
		add("CI_API_V4_URL", u.Scheme+"://"+u.Host+u.Path+"/api/v4")
		if f.PipelineID != 0 && f.ProjectPath != "" {
			add("CI_PIPELINE_URL", ProjectURL(f.ServerURL, f.ProjectPath)+"/-/pipelines/"+id(f.PipelineID))
		}
	}

	if f.ProjectPath != "" {
		namespace, root := "", f.ProjectPath
		if i := strings.LastIndexByte(f.ProjectPath, '/'); i >= 0 {
			namespace = f.ProjectPath[:i]
		}
		if i := strings.IndexByte(f.ProjectPath, '/'); i >= 0 {
			root = f.ProjectPath[:i]
		}
		add("CI_PROJECT_NAMESPACE", namespace)
		add("CI_PROJECT_ROOT_NAMESPACE", root)
	}
	if f.ProjectTitle != "" {
		add("CI_PROJECT_TITLE", f.ProjectTitle)
	}
	if f.ProjectVisibility != "" {
		add("CI_PROJECT_VISIBILITY", f.ProjectVisibility)
	}

	if f.PipelineIID != 0 {
		add("CI_PIPELINE_IID", id(f.PipelineIID))
	}
	if !f.PipelineCreatedAt.IsZero() {
		add("CI_PIPELINE_CREATED_AT", f.PipelineCreatedAt.UTC().Format(time.RFC3339))
	}

	if f.SHA != "" {
		add("CI_COMMIT_SHORT_SHA", shortSHA(f.SHA))
		before := f.BeforeSHA
		if before == "" {
			before = ZeroSHA
		}
		add("CI_COMMIT_BEFORE_SHA", before)
	}
	if f.CommitMessage != "" {
		title, description := commitTitle(f.CommitMessage)
		add("CI_COMMIT_MESSAGE", f.CommitMessage)
		add("CI_COMMIT_TITLE", title)
		add("CI_COMMIT_DESCRIPTION", description)
	}
	if f.CommitAuthor != "" {
		add("CI_COMMIT_AUTHOR", f.CommitAuthor)
	}
	if !f.CommitTimestamp.IsZero() {
		add("CI_COMMIT_TIMESTAMP", f.CommitTimestamp.Format(time.RFC3339))
	}

	if mr == nil && !f.IsTag && len(f.OpenMergeRequests) > 0 {
		open := f.OpenMergeRequests
		if len(open) > maxOpenMergeRequests {
			open = open[:maxOpenMergeRequests]
		}
		add("CI_OPEN_MERGE_REQUESTS", strings.Join(open, ","))
	}

	if mr != nil {
		eventType := mr.EventType
		if eventType == "" {
			eventType = "detached"
		}
		add("CI_MERGE_REQUEST_ID", id(mr.ID))
		add("CI_MERGE_REQUEST_IID", id(mr.IID))
		add("CI_MERGE_REQUEST_PROJECT_ID", id(mr.ProjectID))
		add("CI_MERGE_REQUEST_PROJECT_PATH", mr.ProjectPath)
		add("CI_MERGE_REQUEST_PROJECT_URL", ProjectURL(f.ServerURL, mr.ProjectPath))
		add("CI_MERGE_REQUEST_REF_PATH", "refs/merge-requests/"+id(mr.IID)+"/head")
		add("CI_MERGE_REQUEST_TITLE", mr.Title)
		add("CI_MERGE_REQUEST_DRAFT", boolean(mr.Draft))
		add("CI_MERGE_REQUEST_EVENT_TYPE", eventType)
		add("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", mr.SourceBranch)
		add("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", id(mr.SourceProjectID))
		add("CI_MERGE_REQUEST_SOURCE_PROJECT_PATH", mr.SourceProjectPath)
		add("CI_MERGE_REQUEST_SOURCE_PROJECT_URL", ProjectURL(f.ServerURL, mr.SourceProjectPath))
		add("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", mr.TargetBranch)
		add("CI_MERGE_REQUEST_TARGET_BRANCH_PROTECTED", boolean(mr.TargetProtected))
		if mr.DiffBaseSHA != "" {
			add("CI_MERGE_REQUEST_DIFF_BASE_SHA", mr.DiffBaseSHA)
		}
		if len(mr.Labels) > 0 {
			add("CI_MERGE_REQUEST_LABELS", strings.Join(mr.Labels, ","))
		}
		if len(mr.Assignees) > 0 {
			add("CI_MERGE_REQUEST_ASSIGNEES", strings.Join(mr.Assignees, ","))
		}
		if mr.Milestone != "" {
			add("CI_MERGE_REQUEST_MILESTONE", mr.Milestone)
		}
	}
	return vars
}

// AddMissing returns base followed by the variables of more whose keys
// base does not hold, so that the 9.x set and today's can be sent
// together without a name twice.
func AddMissing(base, more []Variable) []Variable {
	seen := make(map[string]bool, len(base))
	for _, v := range base {
		seen[v.Key] = true
	}
	out := append([]Variable(nil), base...)
	for _, v := range more {
		if !seen[v.Key] {
			seen[v.Key] = true
			out = append(out, v)
		}
	}
	return out
}

func shortSHA(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

// commitTitle splits a message as GitLab's CI_COMMIT_TITLE and
// CI_COMMIT_DESCRIPTION do: the title is the first line; the description
// is the rest without the blank line after the title when the title is
// under 100 characters, and the whole message otherwise.
func commitTitle(message string) (string, string) {
	title, rest, _ := strings.Cut(strings.TrimLeft(message, "\n"), "\n")
	title = strings.TrimRight(title, "\r")
	if len([]rune(title)) >= 100 {
		return title, message
	}
	return title, strings.TrimLeft(rest, "\r\n")
}
