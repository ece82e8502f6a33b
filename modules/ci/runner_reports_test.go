package ci_test

import "testing"

// Reports through a real gitlab-runner: the same pipeline as
// TestReportsShell, the reports uploaded as gzip artifacts of their type.
func TestRunnerReports(t *testing.T) {
	t.Parallel()
	gitlabRunner(t)
	s := startRunners(t)
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--wait-timeout", "30")
	checkReports(t, s, "reports-runner")
}
