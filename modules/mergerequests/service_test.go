package mergerequests_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives mergerequest.Service as an embedder, a
// page or an admin command would, with no request behind it: the same
// rules and domain errors as the API (which maps them to its answers),
// and what it does is what the API then shows.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc mergerequest.Service
	var users auth.UserLookup
	s := start(t, fennectest.WithExtract(&svc, &users))
	p, w, alice := setup(t, s, "service")
	bob := s.CreateUser(t, "bob")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.ReporterPermissions)
	head := w.commit("feature", map[string]string{"b.txt": "b\n"})
	w.git("push", "-q", "origin", "feature")
	as := func(id int64) context.Context { return fennectest.AsUser(t, users, id) }
	project := strconv.FormatInt(p.ID, 10)
	str := func(v string) *string { return &v }

	if _, err := svc.Create(as(alice.ID), project, mergerequest.Fields{Title: str("No branches")}); !errors.Is(err, mergerequest.ErrMissing) {
		t.Fatalf("create without branches: %v", err)
	}
	made, err := svc.Create(as(alice.ID), project, mergerequest.Fields{SourceBranch: str("feature"), TargetBranch: str("master"),
		Title: str(" Service ")})
	if err != nil {
		t.Fatal(err)
	}
	if made.IID != 1 || made.ProjectID != p.ID || made.Title != "Service" || made.State != mergerequest.Opened || made.SHA != head ||
		made.AuthorID != alice.ID || !strings.HasSuffix(made.WebURL, "/alice/service/merge_requests/1") {
		t.Fatalf("created %+v", made)
	}
	if _, err := svc.Create(as(alice.ID), project, mergerequest.Fields{SourceBranch: str("feature"), TargetBranch: str("master"),
		Title: str("Again")}); !errors.Is(err, mergerequest.ErrExists) {
		t.Fatalf("a second one of the same branches: %v", err)
	}
	ref := mergerequest.Ref{Project: project, IID: made.IID}

	// A Reporter may read it but not merge it; a wrong sha is refused
	// with the head; nothing is merged meanwhile.
	if got, err := svc.Get(as(bob.ID), ref); err != nil || got.ID != made.ID {
		t.Fatalf("bob reads %+v, %v", got, err)
	}
	if _, err := svc.Merge(as(bob.ID), ref, mergerequest.MergeInput{}); !errors.Is(err, mergerequest.ErrMergeNotAllowed) {
		t.Fatalf("bob merges: %v", err)
	}
	var mismatch *mergerequest.SHAMismatchError
	if _, err := svc.Merge(as(alice.ID), ref, mergerequest.MergeInput{SHA: str(strings.Repeat("0", 40))}); !errors.As(err, &mismatch) ||
		mismatch.Head != head || !errors.Is(err, mergerequest.ErrSHAMismatch) {
		t.Fatalf("merge of another sha: %v", err)
	}
	if _, err := svc.Get(as(alice.ID), mergerequest.Ref{Project: project, IID: 9}); !errors.Is(err, mergerequest.ErrNotFound) {
		t.Fatalf("no such one: %v", err)
	}
	if _, err := svc.Get(as(bob.ID), mergerequest.Ref{Project: "alice/nothing", IID: 1}); !errors.Is(err, projects.ErrNotFound) {
		t.Fatalf("no such project: %v", err)
	}
	// Without CI there is no pipeline to wait for.
	if _, err := svc.SetAutoMerge(as(alice.ID), ref, mergerequest.MergeInput{}); !errors.Is(err, mergerequest.ErrNothingToWaitFor) {
		t.Fatalf("set auto merge: %v", err)
	}
	if _, err := svc.CancelAutoMerge(as(alice.ID), ref); !errors.Is(err, mergerequest.ErrNoAutoMerge) {
		t.Fatalf("cancel auto merge: %v", err)
	}

	merged, err := svc.Merge(as(alice.ID), ref, mergerequest.MergeInput{SHA: str(head), Message: str("Merged by a service")})
	if err != nil {
		t.Fatal(err)
	}
	if merged.State != mergerequest.Merged || merged.MergedByID != alice.ID || merged.MergedAt == nil || merged.MergeCommitSHA == "" {
		t.Fatalf("merged %+v", merged)
	}
	if _, err := svc.Merge(as(alice.ID), ref, mergerequest.MergeInput{}); !errors.Is(err, mergerequest.ErrNotOpen) {
		t.Fatalf("merging twice: %v", err)
	}
	if _, err := svc.Close(as(alice.ID), ref); !errors.Is(err, mergerequest.ErrNotChangeable) {
		t.Fatalf("closing a merged one: %v", err)
	}
	v := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
	if v["state"] != "merged" || v["merge_commit_sha"] != merged.MergeCommitSHA || v["merged_by"].(map[string]any)["username"] != "alice" {
		t.Fatalf("the API shows %v", v)
	}
	if msg := w.git("fetch", "-q", "origin", "master"); msg != "" {
		t.Fatal(msg)
	}
	if got := w.git("log", "-1", "--format=%s", "FETCH_HEAD"); got != "Merged by a service" {
		t.Fatalf("merge commit %q", got)
	}
}

// TestServiceCloseReopen: Close and Reopen are the update's state events,
// with their notes, as the API's PUT makes them.
func TestServiceCloseReopen(t *testing.T) {
	t.Parallel()
	var svc mergerequest.Service
	var users auth.UserLookup
	s := start(t, fennectest.WithExtract(&svc, &users))
	p, w, alice := setup(t, s, "states")
	w.commit("feature", map[string]string{"b.txt": "b\n"})
	w.git("push", "-q", "origin", "feature")
	openMR(t, alice.Client, p.ID, "feature", "master", "States")
	ctx := fennectest.AsUser(t, users, alice.ID)
	ref := mergerequest.Ref{Project: "alice/states", IID: 1}
	if m, err := svc.Close(ctx, ref); err != nil || m.State != mergerequest.Closed {
		t.Fatalf("close: %+v, %v", m, err)
	}
	if m, err := svc.Reopen(ctx, ref); err != nil || m.State != mergerequest.Reopened || !m.State.Open() {
		t.Fatalf("reopen: %+v, %v", m, err)
	}
	if _, err := svc.Update(ctx, ref, mergerequest.Fields{}, ""); !errors.Is(err, mergerequest.ErrNothingGiven) {
		t.Fatalf("an empty update: %v", err)
	}
	if n := s.notes(t, alice.Token, p.ID, 1); !hasNote(n, "closed") || !hasNote(n, "reopened") {
		t.Fatalf("notes %q", n)
	}
}
