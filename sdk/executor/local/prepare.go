package local

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/archive"
)

var hexSHA = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// prepare fetches the repository at the job's sha and its dependencies'
// artifacts. It returns the failure and true when the job cannot go on.
func (r *runner) prepare(ctx context.Context) (executor.Result, bool) {
	if res, stop := r.clone(ctx); stop {
		return res, true
	}
	return r.dependencies(ctx)
}

// stopped is the result for a prepare phase ctx ended, with ok false when
// ctx has not ended.
func (r *runner) stopped(ctx context.Context) (executor.Result, bool) {
	if ctx.Err() == nil {
		return executor.Result{}, false
	}
	kind, msg := r.stoppedBy(context.Cause(ctx), r.timeout, executor.Step{Name: "prepare"})
	return executor.Result{ExitCode: -1, Failure: kind, Message: msg}, true
}

func (r *runner) clone(ctx context.Context) (executor.Result, bool) {
	g := r.j.spec.Git
	if g.RepoURL == "" {
		r.t.Printf("Skipping the git repository (no repository URL)")
		return executor.Result{}, false
	}
	failPrepare := func(format string, args ...any) (executor.Result, bool) {
		if res, stop := r.stopped(ctx); stop {
			return res, true
		}
		msg := fmt.Sprintf(format, args...)
		r.t.Printf("ERROR: %s", msg)
		return executor.Result{ExitCode: -1, Failure: executor.FailurePrepare, Message: msg}, true
	}
	if !hexSHA.MatchString(g.SHA) {
		return failPrepare("the job's sha %q is not a full hexadecimal object name", g.SHA)
	}
	u, err := url.Parse(g.RepoURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return failPrepare("the repository URL is not an http(s) URL")
	}
	user, pass := "gitlab-ci-token", r.j.spec.Token
	if u.User != nil {
		user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			pass = p
		}
	}
	u.User = nil
	clean := u.String()
	// The credentials travel as a header from the environment: neither in
	// .git/config, where the steps would find them after the job, nor on
	// a command line that every user of the machine can read.
	env := append(r.baseEnv(),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)),
	)
	project := r.j.dirs.Project
	git := func(out io.Writer, args ...string) (int, bool) {
		c := command{argv: append([]string{r.git}, args...), dir: project, env: env, out: out, mark: r.j.mark, procs: &r.e.procs}
		code, stopped, err := c.run(ctx)
		if err != nil {
			r.t.Printf("ERROR: git: %v", err)
			return -1, false
		}
		return code, stopped
	}
	ok := func(args ...string) bool {
		code, stopped := git(r.t, args...)
		return code == 0 && !stopped
	}

	r.t.Printf("Fetching %s from %s", g.SHA, clean)
	if !ok("init", "-q", ".") || !ok("remote", "add", "origin", clean) {
		return failPrepare("could not set up the git repository")
	}
	depth := []string{}
	if g.Depth > 0 {
		depth = []string{fmt.Sprintf("--depth=%d", g.Depth)}
	}
	if g.Ref != "" {
		refspec := "+refs/heads/" + g.Ref + ":refs/remotes/origin/" + g.Ref
		if g.Tag {
			refspec = "+refs/tags/" + g.Ref + ":refs/tags/" + g.Ref
		}
		if code, _ := git(io.Discard, "check-ref-format", strings.SplitN(refspec, ":", 2)[1]); code != 0 || strings.HasPrefix(g.Ref, "-") {
			return failPrepare("the ref %q is not a valid ref name", g.Ref)
		}
		if !ok(append(append([]string{"fetch", "-q", "--no-tags"}, depth...), "origin", refspec)...) {
			return failPrepare("could not fetch %s from %s", g.Ref, clean)
		}
	}
	if code, _ := git(io.Discard, "cat-file", "-e", g.SHA+"^{commit}"); code != 0 {
		// The ref moved on (or none was given): fetch every branch and tag.
		if !ok(append(append([]string{"fetch", "-q"}, depth...), "origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")...) {
			return failPrepare("could not fetch from %s", clean)
		}
		if code, _ := git(io.Discard, "cat-file", "-e", g.SHA+"^{commit}"); code != 0 {
			return failPrepare("commit %s is not in the repository", g.SHA)
		}
	}
	r.t.Printf("Checking out %s as %s...", g.SHA[:8], g.Ref)
	if !ok("-c", "advice.detachedHead=false", "checkout", "-q", "-f", g.SHA) {
		return failPrepare("could not check out %s", g.SHA)
	}
	if a := r.j.spec.Artifacts; a != nil && a.Untracked {
		// Listed now, while the repository's configuration is still ours:
		// later, git would obey whatever the steps wrote into .git/config.
		var list bytes.Buffer
		if code, _ := git(&list, "ls-files", "-z"); code != 0 {
			return failPrepare("could not list the tracked files")
		}
		r.j.tracked = map[string]bool{}
		for _, f := range strings.Split(list.String(), "\x00") {
			if f != "" {
				r.j.tracked[f] = true
			}
		}
	}
	return executor.Result{}, false
}

// dependencies downloads and extracts the dependencies' archives.
func (r *runner) dependencies(ctx context.Context) (executor.Result, bool) {
	for _, dep := range r.j.spec.Dependencies {
		r.t.Printf("Downloading artifacts for %s (%d)...", dep.Name, dep.ID)
		if err := r.dependency(ctx, dep); err != nil {
			if res, stop := r.stopped(ctx); stop {
				return res, true
			}
			msg := fmt.Sprintf("artifacts of %s (%d): %v", dep.Name, dep.ID, err)
			r.t.Printf("ERROR: %s", msg)
			return executor.Result{ExitCode: -1, Failure: executor.FailureDependency, Message: msg}, true
		}
	}
	return executor.Result{}, false
}

// maxExtractFactor bounds how much an archive may expand into the work
// directory, relative to the artifacts cap, so a zip bomb stops early.
const maxExtractFactor = 20

func (r *runner) dependency(ctx context.Context, dep executor.Dependency) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dep.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("JOB-TOKEN", dep.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server answered %s", resp.Status)
	}
	p := filepath.Join(r.j.dirs.Plugin, fmt.Sprintf("dependency-%d.zip", dep.ID))
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(p)
	defer f.Close()
	var body io.Reader = resp.Body
	limit := r.j.spec.MaxArtifactsBytes
	if limit > 0 {
		body = io.LimitReader(resp.Body, limit+1)
	}
	n, err := io.Copy(f, body)
	if err != nil {
		return err
	}
	if limit > 0 && n > limit {
		return fmt.Errorf("the archive is larger than the limit of %d bytes", limit)
	}
	var extractCap int64
	if limit > 0 {
		extractCap = limit * maxExtractFactor
	}
	links, err := archive.Extract(f, n, r.j.dirs.Project, extractCap)
	if err != nil {
		return err
	}
	if links > 0 {
		r.t.Printf("WARNING: %d symbolic links in the archive were not extracted", links)
	}
	return nil
}
