package repository_test

import (
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

func TestContributorsMatchGit(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	list, resp, err := w.s.NewClient(t, "").Repositories.Contributors(w.project.ID, nil)
	if err != nil || resp.Header.Get("X-Total") != "1" || len(list) != 1 {
		t.Fatalf("%+v %v", list, err)
	}
	c := list[0]
	adds, dels := 0, 0
	for _, line := range strings.Split(gitCmd(t, w.work, "log", "--numstat", "--format="), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] != "-" { // "-": a binary file counts no lines
			a, _ := strconv.Atoi(f[0])
			d, _ := strconv.Atoi(f[1])
			adds, dels = adds+a, dels+d
		}
	}
	commits, _ := strconv.Atoi(gitCmd(t, w.work, "rev-list", "--count", "HEAD"))
	if c.Name != "T" || c.Email != "t@example.com" || int(c.Commits) != commits || int(c.Additions) != adds || int(c.Deletions) != dels {
		t.Fatalf("contributor %+v, git says %d commits +%d -%d", c, commits, adds, dels)
	}
}
