package repository_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The history endpoints (blame, merge_base, commits/:sha/refs, revert,
// commits?all=true) are checked against the git CLI on one history with
// branches, merges, a file deleted and added back, and distinct dates.

type historyWorld struct {
	s       *fennectest.Server
	project *gitlab.Project
	id      string
	work    string
	bare    string
	clock   int
	// Commits by name.
	at map[string]string
}

// git runs git in dir with the world's clock: every commit made through
// it is a second later than the one before, so that date orders are
// total.
func (w *historyWorld) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(w.gitRaw(t, dir, args...))
}

// gitRaw is git with its output as it is.
func (w *historyWorld) gitRaw(t *testing.T, dir string, args ...string) string {
	t.Helper()
	w.clock++
	date := fmt.Sprintf("@%d +0200", 1700000000+w.clock*60)
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.com",
		"GIT_COMMITTER_NAME=Carl", "GIT_COMMITTER_EMAIL=carl@example.com", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (w *historyWorld) write(t *testing.T, name, content string) {
	t.Helper()
	full := filepath.Join(w.work, name)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *historyWorld) commit(t *testing.T, name, msg string) string {
	t.Helper()
	w.git(t, w.work, "add", "-A")
	w.git(t, w.work, "commit", "-q", "--allow-empty", "-m", msg)
	h := w.git(t, w.work, "rev-parse", "HEAD")
	w.at[name] = h
	return h
}

// codeLines is the alphabet of the blamed file: code-like lines with
// indentation and blank lines, so that changes can slide and git's indent
// heuristic has choices to make.
var codeLines = []string{"}", "{", "", "\tx();", "\t}", "\treturn;", "\tif (a) {", "\t\ty();", "int f() {", "\t// note"}

// edit changes a few random lines of text.
func edit(r *rand.Rand, lines []string) []string {
	out := slices.Clone(lines)
	for n := 1 + r.IntN(4); n > 0; n-- {
		pos := r.IntN(len(out) + 1)
		switch r.IntN(3) {
		case 0:
			ins := make([]string, 1+r.IntN(4))
			for i := range ins {
				ins[i] = codeLines[r.IntN(len(codeLines))]
			}
			out = slices.Insert(out, pos, ins...)
		case 1:
			if pos < len(out) && len(out) > 3 {
				out = slices.Delete(out, pos, min(len(out), pos+1+r.IntN(2)))
			}
		default:
			if pos < len(out) {
				out[pos] = codeLines[r.IntN(len(codeLines))]
			}
		}
	}
	return out
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// newHistoryWorld builds the history and pushes it to a public project:
//
//	master: 12 edits of src/main.c, then topic merged, 6 more edits,
//	        notes.txt added (c-notes), gone.txt deleted and added back
//	topic:  from master's 6th commit, 5 edits of src/main.c and side.txt
//	side:   from master's 3rd commit, one commit (never merged)
//	orphan: a history of its own
//	tags:   v1 (lightweight, master's 4th), v2 (annotated, topic's tip)
func newHistoryWorld(t *testing.T) *historyWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	var bus *events.Bus
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&bus, &repos))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("history"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, bus)
	w := &historyWorld{s: s, project: p, id: strconv.FormatInt(p.ID, 10), work: t.TempDir(), bare: repos.Path(p.ID), at: map[string]string{}}
	w.git(t, w.work, "init", "-q", "-b", "master")
	r := rand.New(rand.NewPCG(35, 2))
	main := []string{"int f() {", "\tif (a) {", "\t\ty();", "\t}", "", "\treturn;", "}"}
	w.write(t, "src/main.c", joinLines(main))
	w.write(t, "gone.txt", "first life\n")
	w.commit(t, "m0", "start\n\nthe first commit")
	for i := 1; i <= 12; i++ {
		main = edit(r, main)
		w.write(t, "src/main.c", joinLines(main))
		w.commit(t, fmt.Sprintf("m%d", i), fmt.Sprintf("master edit %d", i))
		switch i {
		case 3:
			w.git(t, w.work, "branch", "side")
		case 4:
			w.git(t, w.work, "tag", "v1")
		case 6:
			w.git(t, w.work, "branch", "topic")
		}
	}
	w.git(t, w.work, "checkout", "-q", "topic")
	topic := strings.Split(strings.TrimSuffix(w.gitRaw(t, w.work, "show", "HEAD:src/main.c"), "\n"), "\n")
	for i := 1; i <= 5; i++ {
		topic = edit(r, topic)
		w.write(t, "src/main.c", joinLines(topic))
		w.write(t, "side.txt", fmt.Sprintf("topic %d\n", i))
		w.commit(t, fmt.Sprintf("t%d", i), fmt.Sprintf("topic edit %d", i))
	}
	w.git(t, w.work, "tag", "-a", "v2", "-m", "release two")
	w.git(t, w.work, "checkout", "-q", "side")
	w.write(t, "side-only.txt", "side\n")
	w.commit(t, "s1", "side work")
	w.git(t, w.work, "checkout", "-q", "master")
	w.git(t, w.work, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge topic", "topic")
	w.at["merge"] = w.git(t, w.work, "rev-parse", "HEAD")
	main = strings.Split(strings.TrimSuffix(w.gitRaw(t, w.work, "show", "HEAD:src/main.c"), "\n"), "\n")
	for i := 13; i <= 18; i++ {
		main = edit(r, main)
		w.write(t, "src/main.c", joinLines(main))
		w.commit(t, fmt.Sprintf("m%d", i), fmt.Sprintf("master edit %d", i))
	}
	w.write(t, "notes.txt", "a note\n")
	w.commit(t, "c-notes", "add notes")
	if err := os.Remove(filepath.Join(w.work, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	w.commit(t, "c-gone", "remove gone.txt")
	w.write(t, "gone.txt", "first life\nsecond life\n")
	w.commit(t, "c-back", "gone.txt is back")
	// An insertion that can slide, placed differently by git's indent
	// heuristic than by the bare diff.
	w.write(t, "slide.c", "\treturn;\n\treturn;\n\n}\n\t\ty();\n\tif (a) {\n\tif (a) {\n\tif (a) {\n")
	w.commit(t, "slide1", "slide one")
	w.write(t, "slide.c", "\treturn;\n\treturn;\n\n}\n\t\ty();\n\tif (a) {\n\t\ty();\n\tif (a) {\n\tif (a) {\n\tif (a) {\n")
	w.commit(t, "slide2", "slide two")
	w.git(t, w.work, "checkout", "-q", "--orphan", "orphan")
	w.git(t, w.work, "rm", "-q", "-r", "-f", ".")
	w.write(t, "alone.txt", "alone\n")
	w.commit(t, "o1", "an unrelated history")
	w.git(t, w.work, "checkout", "-q", "master")
	touchRepository(t, s.Client, p.ID)
	w.git(t, w.work, "push", "-q", "--tags", w.bare, "master", "topic", "side", "orphan")
	return w
}

// get calls the API as root and decodes into out.
func (w *historyWorld) get(t *testing.T, path string, out any) (*http.Response, string) {
	t.Helper()
	resp, raw := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+w.id+path, nil, out, "PRIVATE-TOKEN", w.s.RootToken)
	return resp, strings.TrimSpace(string(raw))
}

// gitBlame is `git blame --porcelain`'s commit of each line.
func gitBlame(t *testing.T, w *historyWorld, ref, path string) []string {
	t.Helper()
	out := w.gitRaw(t, w.bare, "blame", "--porcelain", ref, "--", path)
	var owners []string
	var current string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && len(f[0]) == 40 && !strings.HasPrefix(line, "\t") {
			current = f[0]
			continue
		}
		if strings.HasPrefix(line, "\t") {
			owners = append(owners, current)
		}
	}
	return owners
}

type blameRange struct {
	Commit struct {
		ID             string   `json:"id"`
		ParentIDs      []string `json:"parent_ids"`
		Message        string   `json:"message"`
		AuthoredDate   string   `json:"authored_date"`
		AuthorName     string   `json:"author_name"`
		AuthorEmail    string   `json:"author_email"`
		CommittedDate  string   `json:"committed_date"`
		CommitterName  string   `json:"committer_name"`
		CommitterEmail string   `json:"committer_email"`
	} `json:"commit"`
	Lines []string `json:"lines"`
}

func TestBlameMatchesGit(t *testing.T) {
	t.Parallel()
	w := newHistoryWorld(t)
	for _, c := range []struct{ ref, path string }{
		{"master", "src/main.c"}, {"topic", "src/main.c"}, {"v1", "src/main.c"}, {w.at["m9"], "src/main.c"},
		{"master", "gone.txt"}, {"master", "slide.c"}, {"master", "side.txt"}, {"v2", "side.txt"}, {"master", "notes.txt"},
	} {
		var ranges []blameRange
		resp, raw := w.get(t, "/repository/files/"+url.PathEscape(c.path)+"/blame?ref="+c.ref, &ranges)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("blame %s at %s: %d %s", c.path, c.ref, resp.StatusCode, raw)
		}
		if resp.Header.Get("X-Total") != "" {
			t.Errorf("blame %s at %s: paginated (X-Total %q); GitLab's is not", c.path, c.ref, resp.Header.Get("X-Total"))
		}
		var got []string
		var text []string
		for i, r := range ranges {
			if len(r.Lines) == 0 {
				t.Errorf("blame %s at %s: range %d is empty", c.path, c.ref, i)
			}
			if i > 0 && ranges[i-1].Commit.ID == r.Commit.ID {
				t.Errorf("blame %s at %s: ranges %d and %d have the same commit: not grouped", c.path, c.ref, i-1, i)
			}
			for _, l := range r.Lines {
				got = append(got, r.Commit.ID)
				text = append(text, l)
			}
		}
		want := gitBlame(t, w, c.ref, c.path)
		if !slices.Equal(got, want) {
			t.Errorf("blame %s at %s:\n got %v\nwant %v", c.path, c.ref, got, want)
		}
		content := w.gitRaw(t, w.bare, "show", c.ref+":"+c.path)
		if strings.Join(text, "\n")+"\n" != content {
			t.Errorf("blame %s at %s: lines %q, want the file %q", c.path, c.ref, text, content)
		}
	}

	// The commit of a range as GitLab renders it, exact.
	var ranges []blameRange
	w.get(t, "/repository/files/notes.txt/blame?ref=master", &ranges)
	if len(ranges) != 1 {
		t.Fatalf("notes.txt: %d ranges", len(ranges))
	}
	c := ranges[0].Commit
	parent := w.git(t, w.bare, "rev-parse", w.at["c-notes"]+"^")
	date := w.git(t, w.bare, "show", "-s", "--format=%ad", "--date=format:%Y-%m-%dT%H:%M:%S.000+02:00", w.at["c-notes"])
	if c.ID != w.at["c-notes"] || !slices.Equal(c.ParentIDs, []string{parent}) || c.Message != "add notes\n" ||
		c.AuthorName != "Ann" || c.AuthorEmail != "ann@example.com" || c.CommitterName != "Carl" || c.CommitterEmail != "carl@example.com" ||
		c.AuthoredDate != date || c.CommittedDate != date || !slices.Equal(ranges[0].Lines, []string{"a note"}) {
		t.Errorf("notes.txt blame %+v (date %s)", ranges[0], date)
	}

	// What is not a file at the ref is 404 File Not Found; ref is required.
	for path, want := range map[string]string{
		"/repository/files/nope.txt/blame?ref=master":    `{"message":"404 File Not Found"}`,
		"/repository/files/src/blame?ref=master":         `{"message":"404 File Not Found"}`,
		"/repository/files/notes.txt/blame?ref=nobranch": `{"message":"404 File Not Found"}`,
		"/repository/files/side.txt/blame?ref=v1":        `{"message":"404 File Not Found"}`,
	} {
		if resp, raw := w.get(t, path, nil); resp.StatusCode != http.StatusNotFound || raw != want {
			t.Errorf("%s: %d %s", path, resp.StatusCode, raw)
		}
	}
	if resp, raw := w.get(t, "/repository/files/notes.txt/blame", nil); resp.StatusCode != http.StatusBadRequest || raw != `{"error":"ref is missing"}` {
		t.Errorf("no ref: %d %s", resp.StatusCode, raw)
	}
}

// A file over the bound is refused with 400 and a message that says why,
// before any of its history is walked.
func TestBlameRefusesHugeFiles(t *testing.T) {
	t.Parallel()
	w := newHistoryWorld(t)
	w.write(t, "huge.txt", strings.Repeat("a line of text\n", (1<<20)/15+10))
	w.commit(t, "huge", "a huge file")
	w.git(t, w.work, "push", "-q", w.bare, "master")
	resp, raw := w.get(t, "/repository/files/huge.txt/blame?ref=master", nil)
	want := `{"message":"400 Bad request - the file is too large to blame (at most 1048576 bytes)"}`
	if resp.StatusCode != http.StatusBadRequest || raw != want {
		t.Fatalf("huge blame: %d %s", resp.StatusCode, raw)
	}
}

func TestMergeBaseMatchesGit(t *testing.T) {
	t.Parallel()
	w := newHistoryWorld(t)
	for _, refs := range [][]string{
		{"master", "side"}, {"side", "master"}, {"topic", "side"}, {"v2", "master"}, {w.at["m9"], "topic"},
		{"master", "topic", "side"}, {"side", "topic", "v1"}, {"master", "master"},
	} {
		q := url.Values{}
		for _, r := range refs {
			q.Add("refs[]", r)
		}
		var c struct {
			ID       string `json:"id"`
			ShortID  string `json:"short_id"`
			Title    string `json:"title"`
			Message  string `json:"message"`
			ParentID []string
		}
		resp, raw := w.get(t, "/repository/merge_base?"+q.Encode(), &c)
		want := w.git(t, w.bare, append([]string{"merge-base"}, refs...)...)
		if resp.StatusCode != http.StatusOK || c.ID != want || c.ShortID != want[:8] {
			t.Errorf("merge base of %v: %d %s, want %s", refs, resp.StatusCode, raw, want)
		}
	}
	// Comma-separated, as GitLab also takes them.
	var c struct {
		ID string `json:"id"`
	}
	if resp, raw := w.get(t, "/repository/merge_base?refs=master,side", &c); resp.StatusCode != 200 || c.ID != w.git(t, w.bare, "merge-base", "master", "side") {
		t.Errorf("refs=master,side: %d %s", resp.StatusCode, raw)
	}
	for query, want := range map[string]string{
		"refs[]=master":                          `400 {"message":"Provide at least 2 refs"}`,
		"refs[]=master&refs[]=nope":              `400 {"message":"Could not find ref: nope"}`,
		"refs[]=nope&refs[]=master&refs[]=gone2": `400 {"message":"Could not find refs: nope, gone2"}`,
		"refs[]=master&refs[]=orphan":            `404 {"message":"404 Merge Base Not Found"}`,
		"":                                       `400 {"error":"refs is missing"}`,
	} {
		resp, raw := w.get(t, "/repository/merge_base?"+query, nil)
		if got := strconv.Itoa(resp.StatusCode) + " " + raw; got != want {
			t.Errorf("%q: %s, want %s", query, got, want)
		}
	}
}

func TestCommitRefsMatchGit(t *testing.T) {
	t.Parallel()
	w := newHistoryWorld(t)
	type ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	gitRefs := func(sha, kind string) []ref {
		var out []ref
		args := []string{"branch", "--format=%(refname:short)", "--contains", sha}
		if kind == "tag" {
			args = []string{"tag", "--contains", sha}
		}
		for _, n := range strings.Fields(w.git(t, w.bare, args...)) {
			out = append(out, ref{kind, n})
		}
		return out
	}
	for _, name := range []string{"m0", "m2", "m4", "m9", "t3", "s1", "c-notes", "o1", "merge"} {
		sha := w.at[name]
		want := append(gitRefs(sha, "branch"), gitRefs(sha, "tag")...)
		for _, typ := range []string{"", "?type=all", "?type=branch", "?type=tag"} {
			var got []ref
			resp, raw := w.get(t, "/repository/commits/"+sha+"/refs"+typ, &got)
			expect := []ref{}
			for _, r := range want {
				if typ == "" || typ == "?type=all" || typ == "?type="+r.Type {
					expect = append(expect, r)
				}
			}
			if resp.StatusCode != 200 || !slices.Equal(got, expect) || resp.Header.Get("X-Total") != strconv.Itoa(len(expect)) {
				t.Errorf("refs of %s%s: %d %s, want %v", name, typ, resp.StatusCode, raw, expect)
			}
		}
	}
	// A branch name names its commit too; pages cut the list.
	all := append(gitRefs(w.at["m2"], "branch"), gitRefs(w.at["m2"], "tag")...)
	if len(all) != 5 { // master, side, topic, v1, v2
		t.Fatalf("the history changed: m2 is in %v", all)
	}
	var page []ref
	resp, raw := w.get(t, "/repository/commits/"+w.at["m2"]+"/refs?per_page=2&page=2", &page)
	if resp.StatusCode != 200 || !slices.Equal(page, all[2:4]) || resp.Header.Get("X-Total") != "5" || resp.Header.Get("X-Next-Page") != "3" {
		t.Errorf("refs page 2: %d %s %v", resp.StatusCode, raw, resp.Header)
	}
	var side []ref
	if resp, raw := w.get(t, "/repository/commits/side/refs", &side); resp.StatusCode != 200 || !slices.Equal(side, []ref{{"branch", "side"}}) {
		t.Errorf("refs of side: %d %s", resp.StatusCode, raw)
	}
	if resp, raw := w.get(t, "/repository/commits/0123456789abcdef0123456789abcdef01234567/refs", nil); resp.StatusCode != 404 || raw != `{"message":"404 Commit Not Found"}` {
		t.Errorf("unknown commit: %d %s", resp.StatusCode, raw)
	}
	if resp, raw := w.get(t, "/repository/commits/master/refs?type=bogus", nil); resp.StatusCode != 400 {
		t.Errorf("type=bogus: %d %s", resp.StatusCode, raw)
	}
}

func TestAllCommitsMatchGitLogAll(t *testing.T) {
	t.Parallel()
	w := newHistoryWorld(t)
	want := strings.Fields(w.git(t, w.bare, "log", "--all", "--date-order", "--format=%H"))
	var got []string
	for page := 1; ; page++ {
		var cs []struct {
			ID string `json:"id"`
		}
		resp, raw := w.get(t, "/repository/commits?all=true&ref_name=side&per_page=7&page="+strconv.Itoa(page), &cs)
		if resp.StatusCode != 200 {
			t.Fatalf("page %d: %d %s", page, resp.StatusCode, raw)
		}
		for _, c := range cs {
			got = append(got, c.ID)
		}
		if resp.Header.Get("X-Next-Page") == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("all=true:\n got %v\nwant %v", got, want)
	}
	// With a path, only the commits that touch it.
	want = strings.Fields(w.git(t, w.bare, "log", "--all", "--date-order", "--format=%H", "--", "side.txt"))
	var cs []struct {
		ID string `json:"id"`
	}
	w.get(t, "/repository/commits?all=true&path=side.txt&per_page=100", &cs)
	got = got[:0]
	for _, c := range cs {
		got = append(got, c.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("all=true&path=side.txt:\n got %v\nwant %v", got, want)
	}
}
