package repository_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/repository/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives the repository module's services as a
// page, an admin command or a module above would, with no request behind
// them: the public contracts (gitread.Reader, Merges, CommitGraph,
// BranchProtection, CommitStatuses) and the ref writer's commands, with
// the same permissions and domain errors as the API.
//
// The writer's commands have no contract yet: they are internal.Writer's,
// and their refusals are unexported sentinels, so those are told apart by
// the sentinel's text at the root of the chain (refusal) and the reason
// the typed error carries. Writing files (CommitActions), tags and
// releases with fields take unexported inputs and stay covered through
// HTTP (files_test.go, refs_test.go, releases_test.go).
func TestServiceWithoutHTTP(t *testing.T) {
	var rd gitread.Reader
	var merges repository.Merges
	var graph repository.CommitGraph
	var protection repository.BranchProtection
	var statuses repository.CommitStatuses
	var w *internal.Writer
	var access projects.Access
	var users auth.UserLookup
	s := stocktest.Start(t, fennectest.WithExtract(&rd, &merges, &graph, &protection, &statuses, &w, &access, &users))
	alice, maint, dev, guest, stranger := s.CreateUser(t, "alice"), s.CreateUser(t, "maint"), s.CreateUser(t, "dev"), s.CreateUser(t, "guest"), s.CreateUser(t, "stranger")
	p := stocktest.NewProject(t, alice.Client, "vault", "private")
	stocktest.AddMember(t, alice.Client, p.ID, maint.ID, gitlab.MaintainerPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	c1 := stocktest.CommitFiles(t, alice.Client, p.ID, "master", "one", map[string]string{"README.md": "one\n", "docs/a.txt": "a\n"}).ID
	c2 := stocktest.CommitFiles(t, alice.Client, p.ID, "master", "two", map[string]string{"README.md": "two\n"}).ID
	if _, _, err := alice.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1"), Ref: gitlab.Ptr(c1)}); err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	id, ref := p.ID, strconv.FormatInt(p.ID, 10)
	asAlice, asMaint, asDev := fennectest.AsUser(t, users, alice.ID), fennectest.AsUser(t, users, maint.ID), fennectest.AsUser(t, users, dev.ID)
	asGuest, asStranger := fennectest.AsUser(t, users, guest.ID), fennectest.AsUser(t, users, stranger.ID)
	head := func(t *testing.T, branch string) string {
		t.Helper()
		sha, err := merges.BranchHead(asAlice, id, branch)
		if err != nil {
			t.Fatalf("head of %s: %v", branch, err)
		}
		return sha
	}
	// mayMerge checks Merges.MayMerge for the caller in ctx.
	mayMerge := func(t *testing.T, ctx context.Context, project int64, branch string, want bool) {
		t.Helper()
		if ok, err := merges.MayMerge(ctx, project, branch); err != nil || ok != want {
			t.Fatalf("may merge into %s: %v %v, want %v", branch, ok, err, want)
		}
	}

	t.Run("reads: a guest may not read a private project's code, a stranger is told it is not there", func(t *testing.T) {
		reads := map[string]func(ctx context.Context) error{
			"file":    func(ctx context.Context) error { _, err := rd.File(ctx, id, "master", "README.md", 0); return err },
			"tree":    func(ctx context.Context) error { _, err := rd.Tree(ctx, id, "master", "docs", 0, 0); return err },
			"commit":  func(ctx context.Context) error { _, err := rd.Commit(ctx, id, c1); return err },
			"resolve": func(ctx context.Context) error { _, err := rd.Resolve(ctx, id, "v1"); return err },
			"tags":    func(ctx context.Context) error { _, err := rd.Tags(ctx, id); return err },
			"log": func(ctx context.Context) error {
				return rd.Log(ctx, id, gitread.LogQuery{From: []string{c2}}, func(gitread.Commit) bool { return true })
			},
		}
		for name, read := range reads {
			for _, c := range []struct {
				who  string
				ctx  context.Context
				want error
			}{{"owner", asAlice, nil}, {"developer", asDev, nil}, {"guest", asGuest, projects.ErrForbidden}, {"stranger", asStranger, projects.ErrNotFound}} {
				if err := read(c.ctx); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
					t.Errorf("%s by the %s: %v, want %v", name, c.who, err, c.want)
				}
			}
		}
		if b, err := rd.File(asDev, id, "master", "README.md", 0); err != nil || string(b) != "two\n" {
			t.Fatalf("README at master: %q %v", b, err)
		}
		if b, err := rd.File(asDev, id, "v1", "README.md", 0); err != nil || string(b) != "one\n" {
			t.Fatalf("README at v1: %q %v", b, err)
		}
		if tree, err := rd.Tree(asDev, id, "", "docs", 0, 0); err != nil || len(tree) != 1 || tree[0].Path != "docs/a.txt" || tree[0].Type != gitread.Blob {
			t.Fatalf("docs: %+v %v", tree, err)
		}
		if c, err := rd.Commit(asDev, id, "master"); err != nil || c.ID != c2 || c.Title() != "two" || len(c.ParentIDs) != 1 || c.ParentIDs[0] != c1 {
			t.Fatalf("master's commit: %+v %v", c, err)
		}
		if tags, err := rd.Tags(asDev, id); err != nil || len(tags) != 1 || tags[0].Name != "v1" || tags[0].CommitID != c1 {
			t.Fatalf("tags: %+v %v", tags, err)
		}
		if _, err := rd.File(asDev, id, "nope", "README.md", 0); !errors.Is(err, gitread.ErrRevisionNotFound) {
			t.Fatalf("an unknown revision: %v", err)
		}
		if _, err := rd.File(asDev, id, "master", "docs", 0); !errors.Is(err, gitread.ErrPathNotFound) {
			t.Fatalf("a tree read as a file: %v", err)
		}
		if _, err := rd.File(asDev, id, "master", "README.md", 3); !errors.Is(err, gitread.ErrTooLarge) {
			t.Fatalf("over the caller's limit: %v", err)
		}
		if _, err := rd.File(asAlice, id+1000, "master", "README.md", 0); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("an unknown project: %v", err)
		}
		// A public project's code is anyone's to read.
		open := stocktest.NewProject(t, alice.Client, "open", "public")
		stocktest.CommitFiles(t, alice.Client, open.ID, "master", "init", map[string]string{"x": "y"})
		if b, err := rd.File(asStranger, open.ID, "", "x", 0); err != nil || string(b) != "y" {
			t.Fatalf("a stranger reads a public project: %q %v", b, err)
		}
	})

	t.Run("branches: who may create and remove, names, existence, the default branch", func(t *testing.T) {
		if _, _, err := w.CreateBranch(asGuest, ref, "mine", "master"); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a guest creates a branch: %v", err)
		}
		if _, _, err := w.CreateBranch(asStranger, ref, "mine", "master"); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("a stranger creates a branch: %v", err)
		}
		for _, bad := range []string{"a..b", "-x", "has space", "HEAD", "refs/heads/x", "x.lock", ""} {
			wantRefusal(t, "branch "+strconv.Quote(bad), func() error { _, _, err := w.CreateBranch(asDev, ref, bad, "master"); return err },
				"repository: invalid request", "repository: Branch name is invalid")
		}
		wantRefusal(t, "from nothing", func() error { _, _, err := w.CreateBranch(asDev, ref, "feature", "nope"); return err },
			"repository: invalid request", "repository: Invalid reference name")
		if _, _, err := w.CreateBranch(asDev, ref, "feature", c1); err != nil {
			t.Fatal(err)
		}
		if got := head(t, "feature"); got != c1 {
			t.Fatalf("feature at %s, want %s", got, c1)
		}
		wantRefusal(t, "twice", func() error { _, _, err := w.CreateBranch(asDev, ref, "feature", "master"); return err },
			"repository: invalid request", "repository: Branch already exists")
		if got := head(t, "feature"); got != c1 {
			t.Fatalf("a refused creation moved feature to %s", got)
		}
		if _, err := merges.BranchHead(asDev, id, "nope"); !errors.Is(err, repository.ErrBranchNotFound) {
			t.Fatalf("head of no branch: %v", err)
		}
		if err := w.DeleteBranch(asDev, ref, "nope"); !errors.Is(err, repository.ErrBranchNotFound) {
			t.Fatalf("delete no branch: %v", err)
		}
		wantRefusal(t, "delete the default branch", func() error { return w.DeleteBranch(asAlice, ref, "master") },
			"repository: not allowed", "repository: not allowed: Cannot remove HEAD branch")
		if err := w.DeleteBranch(asGuest, ref, "feature"); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a guest deletes a branch: %v", err)
		}
		if _, _, err := w.CreateBranch(asDev, ref, "scratch", "master"); err != nil {
			t.Fatal(err)
		}
		if err := w.DeleteBranch(asDev, ref, "scratch"); err != nil {
			t.Fatal(err)
		}
		if _, err := merges.BranchHead(asDev, id, "scratch"); !errors.Is(err, repository.ErrBranchNotFound) {
			t.Fatalf("a deleted branch: %v", err)
		}
		// The commit graph merge requests ask.
		if sha, err := graph.ResolveCommit(asDev, id, "feature"); err != nil || sha != c1 {
			t.Fatalf("resolve feature: %s %v", sha, err)
		}
		if _, err := graph.ResolveCommit(asDev, id, "nope"); !errors.Is(err, repository.ErrCommitNotFound) {
			t.Fatalf("resolve nothing: %v", err)
		}
		if in, err := graph.InRange(asDev, id, c2, c1, c2); err != nil || !in {
			t.Fatalf("c2 in c1..c2: %v %v", in, err)
		}
		if in, err := graph.InRange(asDev, id, c1, c1, c2); err != nil || in {
			t.Fatalf("c1 in c1..c2: %v %v", in, err)
		}
		if in, err := graph.InRange(asDev, id, c1, "", c2); err != nil || !in {
			t.Fatalf("c1 in all of c2: %v %v", in, err)
		}
		if _, err := graph.InRange(asDev, id, c1, c1, "master"); !errors.Is(err, repository.ErrCommitNotFound) {
			t.Fatalf("a branch name as head (ids only): %v", err)
		}
	})

	t.Run("protected branches: developers may not push or merge, masters may; nobody removes one", func(t *testing.T) {
		if _, _, err := w.CreateBranch(asDev, ref, "release", c1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.Protect(asDev, ref, "release", true, false, false); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a developer protects: %v", err)
		}
		if _, _, err := w.Protect(asAlice, ref, "nope", true, false, false); !errors.Is(err, repository.ErrBranchNotFound) {
			t.Fatalf("protect no branch: %v", err)
		}
		if _, _, err := w.Protect(asMaint, ref, "release", true, false, false); err != nil {
			t.Fatal(err)
		}
		if ok, err := protection.IsProtected(asDev, id, "release"); err != nil || !ok {
			t.Fatalf("release protected: %v %v", ok, err)
		}
		if ok, err := protection.IsProtected(asDev, id, "feature"); err != nil || ok {
			t.Fatalf("feature protected: %v %v", ok, err)
		}
		mayMerge(t, asDev, id, "release", false)
		mayMerge(t, asMaint, id, "release", true)
		mayMerge(t, asAlice, id, "release", true)
		mayMerge(t, asDev, id, "feature", true)
		mayMerge(t, asGuest, id, "feature", false)

		// A developer's write to it is refused and moves nothing; a
		// master's lands.
		wantRefusal(t, "a developer cherry-picks onto release", func() error { _, err := w.CherryPick(asDev, ref, c2, "release"); return err },
			"repository: refused", "repository: refused: You are not allowed to push into this branch")
		if got := head(t, "release"); got != c1 {
			t.Fatalf("a refused pick moved release to %s", got)
		}
		if _, err := w.CherryPick(asGuest, ref, c2, "feature"); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a guest cherry-picks: %v", err)
		}
		picked, err := w.CherryPick(asMaint, ref, c2, "release")
		if err != nil {
			t.Fatal(err)
		}
		if got := head(t, "release"); got != picked.Hash.String() || len(picked.ParentHashes) != 1 || picked.ParentHashes[0].String() != c1 {
			t.Fatalf("release at %s after the pick %s (parents %v)", got, picked.Hash, picked.ParentHashes)
		}
		wantRefusal(t, "the same pick again", func() error { _, err := w.CherryPick(asMaint, ref, c2, "release"); return err },
			"repository: the commit cannot be cherry-picked", "repository: the commit cannot be cherry-picked")
		wantRefusal(t, "a developer reverts on release", func() error { _, err := w.Revert(asDev, ref, picked.Hash.String(), "release"); return err },
			"repository: refused", "repository: refused: You are not allowed to push into this branch")

		// Nobody removes a protected branch, a master neither.
		for _, ctx := range []context.Context{asDev, asMaint, asAlice} {
			wantRefusal(t, "delete a protected branch", func() error { return w.DeleteBranch(ctx, ref, "release") },
				"repository: not allowed", "repository: not allowed: Protected branch cant be removed")
		}

		// Developers may push when the protection says so.
		if _, _, err := w.Protect(asMaint, ref, "release", true, true, false); err != nil {
			t.Fatal(err)
		}
		mayMerge(t, asDev, id, "release", true) // pushing is enough to merge
		reverted, err := w.Revert(asDev, ref, picked.Hash.String(), "release")
		if err != nil || reverted.ParentHashes[0] != picked.Hash || reverted.Message != "Revert \"two\"\n\nThis reverts commit "+picked.Hash.String() {
			t.Fatalf("a developer reverts on release, now allowed: %+v %v", reverted, err)
		}

		// Unprotected, a developer may remove it.
		if _, _, err := w.Protect(asMaint, ref, "release", false, false, false); err != nil {
			t.Fatal(err)
		}
		if ok, err := protection.IsProtected(asDev, id, "release"); err != nil || ok {
			t.Fatalf("release still protected: %v %v", ok, err)
		}
		if err := w.DeleteBranch(asDev, ref, "release"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("protection rules: levels, wildcards, no one", func(t *testing.T) {
		lvl := func(n int) *int { return &n }
		if _, err := w.CreateProtection(asDev, ref, "rel-*", nil, nil); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a developer adds a protection: %v", err)
		}
		if _, err := w.CreateProtection(asStranger, ref, "rel-*", nil, nil); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("a stranger adds a protection: %v", err)
		}
		wantRefusal(t, "push level 31", func() error { _, err := w.CreateProtection(asMaint, ref, "rel-*", lvl(31), nil); return err },
			"repository: a parameter has no valid value", "repository: push_access_level does not have a valid value")
		wantRefusal(t, "merge level 50", func() error { _, err := w.CreateProtection(asMaint, ref, "rel-*", nil, lvl(50)); return err },
			"repository: a parameter has no valid value", "repository: merge_access_level does not have a valid value")
		wantRefusal(t, "a blank name", func() error { _, err := w.CreateProtection(asMaint, ref, "  ", nil, nil); return err },
			"repository: the protected branch's name is blank", "repository: the protected branch's name is blank")
		// Nobody pushes to rel-*, masters merge (the default level).
		made, err := w.CreateProtection(asMaint, ref, "rel-*", lvl(0), nil)
		if err != nil || made.Name != "rel-*" || made.PushLevel() != 0 || made.MergeLevel() != 40 || made.ProjectID != id {
			t.Fatalf("protect rel-*: %+v %v", made, err)
		}
		wantRefusal(t, "rel-* again", func() error { _, err := w.CreateProtection(asAlice, ref, "rel-*", nil, nil); return err },
			"repository: the branch is protected already", "repository: protected branch rel-* already exists")
		if _, _, err := w.CreateBranch(asMaint, ref, "rel-1", c1); err != nil {
			t.Fatal(err)
		}
		if ok, err := protection.IsProtected(asDev, id, "rel-1"); err != nil || !ok {
			t.Fatalf("rel-1 under rel-*: %v %v", ok, err)
		}
		wantRefusal(t, "the owner picks onto a no-one branch", func() error { _, err := w.CherryPick(asAlice, ref, c2, "rel-1"); return err },
			"repository: refused", "repository: refused: You are not allowed to push into this branch")
		mayMerge(t, asMaint, id, "rel-1", true)
		mayMerge(t, asDev, id, "rel-1", false)
		// The most permissive of the matching rules wins.
		if _, err := w.CreateProtection(asMaint, ref, "rel-1", lvl(30), lvl(0)); err != nil {
			t.Fatal(err)
		}
		mayMerge(t, asDev, id, "rel-1", true)
		if _, err := w.CherryPick(asDev, ref, c2, "rel-1"); err != nil {
			t.Fatalf("a developer picks onto rel-1, pushable by developers: %v", err)
		}
		if err := w.DeleteProtection(asDev, ref, "rel-1"); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a developer unprotects: %v", err)
		}
		for _, name := range []string{"rel-1", "rel-*"} {
			if err := w.DeleteProtection(asMaint, ref, name); err != nil {
				t.Fatal(err)
			}
		}
		wantRefusal(t, "unprotect twice", func() error { return w.DeleteProtection(asMaint, ref, "rel-*") },
			"repository: protected branch not found", "repository: protected branch not found")
		if ok, err := protection.IsProtected(asDev, id, "rel-1"); err != nil || ok {
			t.Fatalf("rel-1 after both went: %v %v", ok, err)
		}
	})

	t.Run("merges: conflicts, and compare-and-set removal", func(t *testing.T) {
		info, err := access.ResolveID(asAlice, id)
		if err != nil {
			t.Fatal(err)
		}
		// feature (at c1) changes README.md as master did: a conflict.
		clash := stocktest.CommitFiles(t, alice.Client, id, "feature", "clash", map[string]string{"README.md": "three\n"}).ID
		master := head(t, "master")
		if ok, err := merges.CanMerge(asAlice, id, master, clash); err != nil || ok {
			t.Fatalf("can merge a conflict: %v %v", ok, err)
		}
		if _, err := merges.Merge(asAlice, info, repository.MergeSpec{Branch: "master", Source: clash, Message: "m"}); !errors.Is(err, repository.ErrMergeConflict) {
			t.Fatalf("merge a conflict: %v", err)
		}
		if got := head(t, "master"); got != master {
			t.Fatalf("a refused merge moved master to %s", got)
		}
		if _, err := merges.Merge(asAlice, info, repository.MergeSpec{Branch: "nope", Source: clash, Message: "m"}); !errors.Is(err, repository.ErrBranchNotFound) {
			t.Fatalf("merge into no branch: %v", err)
		}
		if _, err := merges.Merge(asAlice, info, repository.MergeSpec{Branch: "master", Source: "0123", Message: "m"}); !errors.Is(err, repository.ErrCommitNotFound) {
			t.Fatalf("merge no commit: %v", err)
		}
		// A side branch that touches another file merges cleanly.
		if _, _, err := w.CreateBranch(asDev, ref, "side", c2); err != nil {
			t.Fatal(err)
		}
		side := stocktest.CommitFiles(t, dev.Client, id, "side", "side", map[string]string{"docs/b.txt": "b\n"}).ID
		if ok, err := merges.CanMerge(asAlice, id, master, side); err != nil || !ok {
			t.Fatalf("can merge side: %v %v", ok, err)
		}
		merged, err := merges.Merge(asAlice, info, repository.MergeSpec{Branch: "master", Source: side, Message: "Merge side"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := rd.Commit(asAlice, id, "master")
		if err != nil || c.ID != merged || len(c.ParentIDs) != 2 || c.ParentIDs[0] != master || c.ParentIDs[1] != side || c.Message != "Merge side" || c.Author.Name != "User alice" {
			t.Fatalf("the merge commit: %+v %v", c, err)
		}
		if b, err := rd.File(asAlice, id, "master", "docs/b.txt", 0); err != nil || string(b) != "b\n" {
			t.Fatalf("side's file on master: %q %v", b, err)
		}
		// A removal at a stale sha is refused; at the head it goes.
		if err := merges.DeleteBranch(asAlice, id, "side", c2); !errors.Is(err, repository.ErrRefMoved) {
			t.Fatalf("delete side at a stale sha: %v", err)
		}
		if err := merges.DeleteBranch(asAlice, id, "side", side); err != nil {
			t.Fatal(err)
		}
		if _, err := merges.BranchHead(asAlice, id, "side"); !errors.Is(err, repository.ErrBranchNotFound) {
			t.Fatalf("side after its removal: %v", err)
		}
	})

	t.Run("tags and release notes", func(t *testing.T) {
		if err := w.SetReleaseNotes(asGuest, ref, "v1", "notes", true); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a guest writes release notes: %v", err)
		}
		if err := w.SetReleaseNotes(asDev, ref, "v9", "notes", true); !errors.Is(err, repository.ErrTagNotFound) {
			t.Fatalf("notes of no tag: %v", err)
		}
		wantRefusal(t, "replace notes never written", func() error { return w.SetReleaseNotes(asDev, ref, "v1", "notes", false) },
			"repository: release not found", "repository: release not found")
		wantRefusal(t, "delete a release never made", func() error { _, err := w.DeleteRelease(asDev, ref, "v1"); return err },
			"repository: release does not exist", "repository: release does not exist")
		wantRefusal(t, "delete the release of no tag", func() error { _, err := w.DeleteRelease(asDev, ref, "v9"); return err },
			"repository: tag does not exist", "repository: tag does not exist")
		if err := w.SetReleaseNotes(asDev, ref, "v1", "first", true); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, "notes twice", func() error { return w.SetReleaseNotes(asDev, ref, "v1", "again", true) },
			"repository: release already exists", "repository: release already exists")
		if err := w.SetReleaseNotes(asDev, ref, "v1", "first, revised", false); err != nil {
			t.Fatal(err)
		}
		gone, err := w.DeleteRelease(asDev, ref, "v1")
		if err != nil || gone.Release == nil || gone.Release.TagName != "v1" || gone.Release.Description == nil ||
			*gone.Release.Description != "first, revised" || gone.Release.SHA != c1 || gone.Info.ID != id {
			t.Fatalf("deleted release: %+v %v", gone.Release, err)
		}
		// A tag's release goes with the tag.
		if err := w.SetReleaseNotes(asDev, ref, "v1", "again", true); err != nil {
			t.Fatal(err)
		}
		if err := w.DeleteTag(asGuest, ref, "v1"); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a guest deletes a tag: %v", err)
		}
		if err := w.DeleteTag(asDev, ref, "v9"); !errors.Is(err, repository.ErrTagNotFound) {
			t.Fatalf("delete no tag: %v", err)
		}
		if err := w.DeleteTag(asDev, ref, "v1"); err != nil {
			t.Fatal(err)
		}
		if tags, err := rd.Tags(asDev, id); err != nil || len(tags) != 0 {
			t.Fatalf("tags after the delete: %+v %v", tags, err)
		}
		if _, _, err := alice.Client.Tags.CreateTag(id, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1"), Ref: gitlab.Ptr(c2)}); err != nil {
			t.Fatal(err)
		}
		wantRefusal(t, "the old release of a new v1", func() error { return w.SetReleaseNotes(asDev, ref, "v1", "x", false) },
			"repository: release not found", "repository: release not found")
	})

	t.Run("commit statuses CI records show in the API, set again in place", func(t *testing.T) {
		st := repository.CommitStatus{ProjectID: id, SHA: c2, Ref: "master", Name: "build", Stage: "test", State: "running", AuthorID: dev.ID}
		if err := statuses.Set(asDev, st); err != nil {
			t.Fatal(err)
		}
		st.State, st.Description = "success", "all green"
		if err := statuses.Set(asDev, st); err != nil {
			t.Fatal(err)
		}
		list := s.Call(t, dev.Token, http.MethodGet, "/api/v4/projects/"+ref+"/repository/commits/"+c2+"/statuses", nil).Expect(t, 200, "").List(t)
		if len(list) != 1 || list[0]["name"] != "build" || list[0]["status"] != "success" || list[0]["description"] != "all green" ||
			list[0]["ref"] != "master" || list[0]["author"].(map[string]any)["username"] != "dev" {
			t.Fatalf("statuses of c2: %v", list)
		}
	})
}

// wantRefusal checks that do fails with the module's unexported sentinel
// whose text is sentinel, through a typed error that reads full.
func wantRefusal(t *testing.T, what string, do func() error, sentinel, full string) {
	t.Helper()
	err := do()
	if err == nil {
		t.Fatalf("%s: no error, want %q", what, full)
	}
	root := err
	for next := errors.Unwrap(root); next != nil; next = errors.Unwrap(root) {
		root = next
	}
	if root.Error() != sentinel || err.Error() != full {
		t.Fatalf("%s: %q (from %q), want %q (from %q)", what, err, root, full, sentinel)
	}
}
