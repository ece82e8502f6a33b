package pipeline

import (
	"net/url"
	"strconv"
	"strings"
)

// RegistryUser is CI_REGISTRY_USER: executors log in to the registry with
// it and the job token.
const RegistryUser = "gitlab-ci-token"

// DefaultConfigPath is CI_CONFIG_PATH when the project sets no other.
const DefaultConfigPath = ".gitlab-ci.yml"

// JobFacts is what the server knows about a job when it hands it to an
// executor; Predefined turns it into the predefined variables. Zero values
// leave out the variables that depend on them where GitLab does (no tag, no
// trigger, no runner, no registry, no environment, no user).
type JobFacts struct {
	// ServerURL is how clients reach the server (http://host[:port][/root]);
	// CI_PROJECT_URL, CI_REPOSITORY_URL are built from it.
	ServerURL      string
	ServerVersion  string
	ServerRevision string

	JobID     int64
	JobName   string
	JobStage  string
	JobToken  string
	JobManual bool

	CommitSHA string
	BeforeSHA string
	RefName   string
	IsTag     bool

	PipelineID int64
	Triggered  bool
	// PipelineSource is what made the pipeline (push, web, trigger,
	// api...), CI_PIPELINE_SOURCE (GitLab 10.0); empty leaves it out.
	PipelineSource Source
	ConfigPath     string // DefaultConfigPath when empty

	ProjectID int64
	// ProjectPath is the full path, group/subgroup/project; the project's
	// name variable is its last element and the namespace the rest.
	ProjectPath string

	EnvironmentName string // expanded; empty when the job has none
	EnvironmentSlug string
	EnvironmentURL  string

	RunnerID          int64 // zero when no executor is assigned yet
	RunnerDescription string
	RunnerTags        []string

	Registry      string // registry host; empty when the registry is off
	RegistryImage string

	UserID    int64 // zero when no user started the pipeline
	UserEmail string
}

// Predefined returns the predefined variables of GitLab 9.x for a job, the
// 8.x CI_BUILD_* aliases included, all public except the job token and the
// URLs and passwords that carry it.
func Predefined(f JobFacts) []Variable {
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	pub := func(k, v string) Variable { return Variable{Key: k, Value: v, Public: true} }
	secret := func(k, v string) Variable { return Variable{Key: k, Value: v} }

	refSlug := RefSlug(f.RefName)
	repoURL := RepositoryURL(f.ServerURL, f.ProjectPath, f.JobToken)
	namespace, name := "", f.ProjectPath
	if i := strings.LastIndexByte(f.ProjectPath, '/'); i >= 0 {
		namespace, name = f.ProjectPath[:i], f.ProjectPath[i+1:]
	}
	configPath := f.ConfigPath
	if configPath == "" {
		configPath = DefaultConfigPath
	}

	vars := []Variable{
		pub("CI", "true"),
		pub("GITLAB_CI", "true"),
		pub("CI_SERVER", "yes"),
		pub("CI_SERVER_NAME", "GitLab"),
		pub("CI_SERVER_VERSION", f.ServerVersion),
		pub("CI_SERVER_REVISION", f.ServerRevision),
		pub("CI_JOB_ID", id(f.JobID)),
		pub("CI_JOB_NAME", f.JobName),
		pub("CI_JOB_STAGE", f.JobStage),
		secret("CI_JOB_TOKEN", f.JobToken),
		pub("CI_COMMIT_SHA", f.CommitSHA),
		pub("CI_COMMIT_REF_NAME", f.RefName),
		pub("CI_COMMIT_REF_SLUG", refSlug),
		pub("CI_REGISTRY_USER", RegistryUser),
		secret("CI_REGISTRY_PASSWORD", f.JobToken),
		secret("CI_REPOSITORY_URL", repoURL),
	}
	if f.IsTag {
		vars = append(vars, pub("CI_COMMIT_TAG", f.RefName))
	}
	if f.Triggered {
		vars = append(vars, pub("CI_PIPELINE_TRIGGERED", "true"))
	}
	if f.JobManual {
		vars = append(vars, pub("CI_JOB_MANUAL", "true"))
	}
	// The 8.x names, still sent by 9.x for old scripts.
	vars = append(vars,
		pub("CI_BUILD_ID", id(f.JobID)),
		secret("CI_BUILD_TOKEN", f.JobToken),
		pub("CI_BUILD_REF", f.CommitSHA),
		pub("CI_BUILD_BEFORE_SHA", f.BeforeSHA),
		pub("CI_BUILD_REF_NAME", f.RefName),
		pub("CI_BUILD_REF_SLUG", refSlug),
		pub("CI_BUILD_NAME", f.JobName),
		pub("CI_BUILD_STAGE", f.JobStage),
		secret("CI_BUILD_REPO", repoURL),
	)
	if f.IsTag {
		vars = append(vars, pub("CI_BUILD_TAG", f.RefName))
	}
	if f.Triggered {
		vars = append(vars, pub("CI_BUILD_TRIGGERED", "true"))
	}
	if f.JobManual {
		vars = append(vars, pub("CI_BUILD_MANUAL", "true"))
	}
	vars = append(vars,
		pub("CI_PROJECT_ID", id(f.ProjectID)),
		pub("CI_PROJECT_NAME", name),
		pub("CI_PROJECT_PATH", f.ProjectPath),
		pub("CI_PROJECT_PATH_SLUG", ProjectPathSlug(f.ProjectPath)),
		pub("CI_PROJECT_NAMESPACE", namespace),
		pub("CI_PROJECT_URL", ProjectURL(f.ServerURL, f.ProjectPath)),
		pub("CI_PIPELINE_ID", id(f.PipelineID)),
		pub("CI_CONFIG_PATH", configPath),
	)
	if f.PipelineSource != "" {
		vars = append(vars, pub("CI_PIPELINE_SOURCE", string(f.PipelineSource)))
	}
	if f.RunnerID != 0 {
		vars = append(vars,
			pub("CI_RUNNER_ID", id(f.RunnerID)),
			pub("CI_RUNNER_DESCRIPTION", f.RunnerDescription),
			pub("CI_RUNNER_TAGS", strings.Join(f.RunnerTags, ", ")),
		)
	}
	if f.Registry != "" {
		vars = append(vars, pub("CI_REGISTRY", f.Registry))
		if f.RegistryImage != "" {
			vars = append(vars, pub("CI_REGISTRY_IMAGE", f.RegistryImage))
		}
	}
	if f.UserID != 0 {
		vars = append(vars,
			pub("GITLAB_USER_ID", id(f.UserID)),
			pub("GITLAB_USER_EMAIL", f.UserEmail),
		)
	}
	if f.EnvironmentName != "" {
		vars = append(vars,
			pub("CI_ENVIRONMENT_NAME", f.EnvironmentName),
			pub("CI_ENVIRONMENT_SLUG", f.EnvironmentSlug),
		)
		if f.EnvironmentURL != "" {
			vars = append(vars, pub("CI_ENVIRONMENT_URL", f.EnvironmentURL))
		}
	}
	return vars
}

// ProjectURL is the project's web URL under serverURL.
func ProjectURL(serverURL, projectPath string) string {
	return strings.TrimSuffix(serverURL, "/") + "/" + projectPath
}

// RepositoryURL is the HTTP clone URL a job uses, with the job token as the
// password of the user gitlab-ci-token:
// http://gitlab-ci-token:<token>@host/group/project.git.
func RepositoryURL(serverURL, projectPath, jobToken string) string {
	u, err := url.Parse(strings.TrimSuffix(serverURL, "/") + "/" + projectPath + ".git")
	if err != nil || u.Host == "" {
		return ""
	}
	u.User = url.UserPassword(RegistryUser, jobToken)
	return u.String()
}

// Layers are the sources of a job's variables. From the lowest precedence to
// the highest (GITLAB-FACTS section 10): predefined, deployment (from the
// project's deployment service), YAML (the job's Variables: job keys over
// global ones), group secret variables, project secret variables (protected
// ones only for protected refs: the caller filters), and trigger or
// schedule variables.
type Layers struct {
	Predefined []Variable
	Deployment []Variable
	YAML       []Variable
	// Dotenv are the variables of the dotenv reports of the jobs whose
	// artifacts the job fetches: above YAML, below group and project.
	Dotenv  []Variable
	Group   []Variable
	Project []Variable
	Trigger []Variable
}

// Ordered returns every variable from the lowest precedence to the highest,
// duplicates included: an executor that sets them in this order ends with
// the right value, which is how GitLab sends them to its runner.
func (l Layers) Ordered() []Variable {
	n := len(l.Predefined) + len(l.Deployment) + len(l.YAML) + len(l.Dotenv) + len(l.Group) + len(l.Project) + len(l.Trigger)
	out := make([]Variable, 0, n)
	for _, layer := range [][]Variable{l.Predefined, l.Deployment, l.YAML, l.Dotenv, l.Group, l.Project, l.Trigger} {
		out = append(out, layer...)
	}
	return out
}

// Resolve returns one variable per key, the one of highest precedence, in
// the order keys first appear in Ordered.
func (l Layers) Resolve() []Variable {
	ordered := l.Ordered()
	index := make(map[string]int, len(ordered))
	out := make([]Variable, 0, len(ordered))
	for _, v := range ordered {
		if i, ok := index[v.Key]; ok {
			out[i] = v
			continue
		}
		index[v.Key] = len(out)
		out = append(out, v)
	}
	return out
}
