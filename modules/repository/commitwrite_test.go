package repository_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func action(a gitlab.FileActionValue, path, content string) *gitlab.CommitActionOptions {
	o := &gitlab.CommitActionOptions{Action: gitlab.Ptr(a), FilePath: gitlab.Ptr(path)}
	if content != "" {
		o.Content = gitlab.Ptr(content)
	}
	return o
}

func TestMultiFileCommit(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	mv := action(gitlab.FileMove, "docs/moved.md", "")
	mv.PreviousPath = gitlab.Ptr("docs/guide/intro.md")
	b64 := action(gitlab.FileCreate, "bin/new.dat", base64.StdEncoding.EncodeToString([]byte{0, 1, 2}))
	b64.Encoding = gitlab.Ptr("base64")
	commit, resp, err := c.Commits.CreateCommit(w.project.ID, &gitlab.CreateCommitOptions{
		Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("many things"),
		AuthorName: gitlab.Ptr("Ann Author"), AuthorEmail: gitlab.Ptr("ann@example.com"),
		Actions: []*gitlab.CommitActionOptions{
			action(gitlab.FileCreate, "new/deep/file.txt", "fresh\n"),
			action(gitlab.FileUpdate, "README.md", "rewritten\n"),
			action(gitlab.FileDelete, "run.sh", ""),
			mv, b64,
		},
	})
	if err != nil || resp.StatusCode != 201 || commit.AuthorName != "Ann Author" || commit.Title != "many things" || len(commit.ParentIDs) != 1 || commit.ParentIDs[0] != w.head {
		t.Fatalf("commit %+v %v", commit, err)
	}
	if commit.Stats == nil || commit.Stats.Additions == 0 {
		t.Fatalf("stats %+v", commit.Stats)
	}
	gitCmd(t, w.bare, "fsck", "--strict")
	files := gitCmd(t, w.bare, "ls-tree", "-r", "--name-only", "master")
	if files != "README.md\nbin/blob.dat\nbin/new.dat\ndocs/moved.md\nnew/deep/file.txt" {
		t.Fatalf("tree after commit:\n%s", files)
	}
	if got := gitCmd(t, w.bare, "show", "master:README.md"); got != "rewritten" {
		t.Fatalf("README %q", got)
	}
	if got := gitCmd(t, w.bare, "show", "master:docs/moved.md"); got != "intro" {
		t.Fatalf("moved file %q", got)
	}
	id := store.IDString(w.project.ID)
	for body, want := range map[string]string{
		`{"branch":"master","commit_message":"x","actions":[{"action":"create","file_path":"README.md","content":"x"}]}`:                   `{"message":"A file with this name already exists: README.md"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"update","file_path":"nope.txt","content":"x"}]}`:                    `{"message":"A file with this name doesn't exist: nope.txt"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"delete","file_path":"nope.txt"}]}`:                                  `{"message":"A file with this name doesn't exist: nope.txt"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"create","file_path":"a.txt"}]}`:                                     `{"message":"You must provide content."}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"create","file_path":"../../etc/x","content":"x"}]}`:                 `{"message":"Invalid file path: ../../etc/x"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"create","file_path":"","content":"x"}]}`:                            `{"message":"Invalid file path: "}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"chmod","file_path":"a","content":"x"}]}`:                            `{"error":"actions[action] does not have a valid value"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"move","file_path":"README.md","previous_path":"bin/new.dat"}]}`:     `{"message":"A file with this name already exists: README.md"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"create","file_path":"b.bin","content":"%%%","encoding":"base64"}]}`: `{"message":"The content of b.bin is not valid Base64"}`,
		`{"branch":"master","actions":[{"action":"create","file_path":"c","content":"x"}]}`:                                                `{"error":"commit_message is missing"}`,
		`{"branch":"topic","commit_message":"x","actions":[{"action":"create","file_path":"c","content":"x"}]}`:                            `{"message":"You can only create a new branch from an existing one: give start_branch"}`,
		`{"branch":"master","commit_message":"x","actions":[{"action":"create","file_path":"README.md/inner","content":"x"}]}`:             `{"message":"A file with this name already exists: README.md"}`,
	} {
		r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+id+"/repository/commits", strings.NewReader(body), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		if r.StatusCode != 400 || strings.TrimSpace(string(raw)) != want {
			t.Errorf("%s:\n  %d %s\n  want %s", body, r.StatusCode, raw, want)
		}
	}
	// Nothing that failed changed the branch.
	if got := gitCmd(t, w.bare, "rev-parse", "master"); got != commit.ID {
		t.Fatalf("a refused commit moved master to %s", got)
	}
	// start_branch makes a new branch.
	topic, _, err := c.Commits.CreateCommit(w.project.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("topic"), StartBranch: gitlab.Ptr("feature"),
		CommitMessage: gitlab.Ptr("on topic"), Actions: []*gitlab.CommitActionOptions{action(gitlab.FileCreate, "t.txt", "t\n")}})
	if err != nil || topic.ParentIDs[0] != gitCmd(t, w.bare, "rev-parse", "feature") {
		t.Fatalf("start_branch %+v %v", topic, err)
	}
}

// Concurrent commits to one branch: each lands or is refused; history holds
// exactly the ones that landed, none lost.
func TestConcurrentCommitsLoseNothing(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed := map[string]bool{}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, _, err := w.s.Client.Commits.CreateCommit(w.project.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
				CommitMessage: gitlab.Ptr(fmt.Sprintf("racer %d", i)), Actions: []*gitlab.CommitActionOptions{action(gitlab.FileCreate, fmt.Sprintf("r%d.txt", i), "r\n")}})
			if err == nil {
				mu.Lock()
				landed[c.ID] = true
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if len(landed) == 0 {
		t.Fatal("no commit landed")
	}
	history := strings.Split(gitCmd(t, w.bare, "rev-list", "master"), "\n")
	inHistory := map[string]bool{}
	for _, h := range history {
		inHistory[h] = true
	}
	for id := range landed {
		if !inHistory[id] {
			t.Fatalf("commit %s was answered 201 but is not in master's history", id)
		}
	}
	if len(history) != 2+len(landed) {
		t.Fatalf("history has %d commits, want %d", len(history), 2+len(landed))
	}
	gitCmd(t, w.bare, "fsck", "--strict")
}

// The first commit of an empty repository creates its branch.
func TestFirstCommitOfAnEmptyRepository(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	p, _, err := w.s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("blank")})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := w.s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("initial"),
		Actions: []*gitlab.CommitActionOptions{action(gitlab.FileCreate, "README.md", "# blank\n")}})
	if err != nil || len(c.ParentIDs) != 0 {
		t.Fatalf("first commit %+v %v", c, err)
	}
	f, _, err := w.s.Client.RepositoryFiles.GetFile(p.ID, "README.md", &gitlab.GetFileOptions{Ref: gitlab.Ptr("master")})
	if err != nil || f.LastCommitID != c.ID {
		t.Fatalf("file %+v %v", f, err)
	}
}

func TestFilesAPIWrites(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	info, resp, err := c.RepositoryFiles.CreateFile(w.project.ID, "notes/a.txt", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("one\n"), CommitMessage: gitlab.Ptr("add a")})
	if err != nil || resp.StatusCode != 201 || info.FilePath != "notes/a.txt" || info.Branch != "master" {
		t.Fatalf("create %+v %v", info, err)
	}
	if _, _, err := c.RepositoryFiles.UpdateFile(w.project.ID, "notes/a.txt", &gitlab.UpdateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("two\n"), CommitMessage: gitlab.Ptr("change a")}); err != nil {
		t.Fatal(err)
	}
	if got := gitCmd(t, w.bare, "show", "master:notes/a.txt"); got != "two" {
		t.Fatalf("content %q", got)
	}
	if _, err := c.RepositoryFiles.DeleteFile(w.project.ID, "notes/a.txt", &gitlab.DeleteFileOptions{Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("drop a")}); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := c.RepositoryFiles.GetFile(w.project.ID, "notes/a.txt", &gitlab.GetFileOptions{Ref: gitlab.Ptr("master")}); err == nil || resp.StatusCode != 404 {
		t.Fatalf("deleted file still there (%v)", resp.StatusCode)
	}
	if _, resp, err := c.RepositoryFiles.CreateFile(w.project.ID, "x.txt", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("nope"),
		Content: gitlab.Ptr("x"), CommitMessage: gitlab.Ptr("x")}); err == nil || resp.StatusCode != 404 {
		t.Fatalf("unknown branch: %v", resp.StatusCode)
	}
	reader := w.s.CreateUser(t, "reader")
	if _, resp, err := reader.Client.RepositoryFiles.CreateFile(w.project.ID, "y.txt", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("y"), CommitMessage: gitlab.Ptr("y")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("non-member write: %v", resp.StatusCode)
	}
}
