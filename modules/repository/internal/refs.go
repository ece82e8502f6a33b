package internal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Protection is a protected branch of a project, or a wildcard of them
// (protectedbranches.go has the access levels these flags stand for).
type Protection struct {
	ID                 int64  `json:"id"`
	ProjectID          int64  `json:"project_id"`
	Name               string `json:"name"`
	DevelopersCanPush  bool   `json:"developers_can_push"`
	DevelopersCanMerge bool   `json:"developers_can_merge"`
	// NoOneCanPush and NoOneCanMerge are access level 0: nobody may,
	// administrators included.
	NoOneCanPush  bool `json:"no_one_can_push,omitempty"`
	NoOneCanMerge bool `json:"no_one_can_merge,omitempty"`
}

func (p *Protection) RecordID() int64      { return p.ID }
func (p *Protection) SetRecordID(id int64) { p.ID = id }

func refKey(project int64, name string) string { return store.IDString(project) + "/" + name }

var (
	protections = store.NewTable[int64, Protection]("repository.protected_branches",
		store.Index[Protection]{Name: "branch", Unique: true, Keys: func(p *Protection) []string { return []string{refKey(p.ProjectID, p.Name)} }},
		store.Index[Protection]{Name: "project", Keys: func(p *Protection) []string { return []string{store.IDString(p.ProjectID)} }},
	)
)

// Writer changes refs through the API, and journals every ref change
// Fennec makes (refjournal.go).
type Writer struct {
	db    *store.DB
	bus   *events.Bus
	rd    *Reader
	users identity.Users
	state projects.RepositoryState
	log   *zap.Logger
	// node marks the journal's entries with this process, so that a
	// node's replay leaves the changes of live nodes alone.
	node *fennec.Node

	jmu    sync.Mutex
	jlocks map[int64]*sync.Mutex
	// retries is the work queue that publishes the push events a ref
	// change could not publish at once (refjournal.go); unpublished holds
	// what this process knows of them, by job id.
	retries     *workqueue.Queue
	retryGrace  time.Duration
	umu         sync.Mutex
	unpublished map[int64]*unpublishedChanges
	// afterMove, set by tests only, runs right after refs moved and before
	// their events are published, with the request's context; an error
	// stops there as a crash would.
	afterMove func(ctx context.Context) error
	// failPublish, set by tests only, runs in every transaction that
	// publishes push events; its error fails that transaction.
	failPublish func() error
}

// NewWriter builds the ref writer. At start it replays the ref journal,
// before any request is served (Provision); its Run works the queue of
// push events to publish again.
func NewWriter(db *store.DB, bus *events.Bus, rd *Reader, users identity.Users, state projects.RepositoryState, node *fennec.Node, log *zap.Logger) *Writer {
	w := &Writer{db: db, bus: bus, rd: rd, users: users, state: state, node: node, log: log.Named("repository"),
		retryGrace: defaultRetryGrace, unpublished: map[int64]*unpublishedChanges{}}
	// Publishing a push again is a few store writes: a minute's lease lets
	// another node take it soon after this one dies.
	w.retries = workqueue.New(db, pushEventsQueue, journalRetry, w.publishAgain, workqueue.WithLogger(w.log),
		workqueue.WithLease(time.Minute))
	return w
}

var (
	_ fennec.Provisioner = (*Writer)(nil)
	_ fennec.Runner      = (*Writer)(nil)
)

// Provision replays the ref journal: ref moves a crash interrupted are
// finished or undone before anything reads a ref.
func (w *Writer) Provision(ctx context.Context) error { return w.replayJournal(ctx) }

// Run works the queue of push events to publish again until the app stops.
func (w *Writer) Run(ctx context.Context) error { return w.retries.Run(ctx) }

// errProtectionUnknown refuses a write when the store cannot say whether
// its branch is protected: a store error must not open a protected branch.
var errProtectionUnknown = errors.New("repository: cannot read the branch protection")

// protection is the protection that applies to a branch (its own and the
// wildcards that match it, combined: protectionIn), nil when it has none. A
// store error is returned, never read as "not protected": callers refuse
// then.
func (w *Writer) protection(ctx context.Context, project int64, name string) (*Protection, error) {
	var p *Protection
	err := w.db.View(ctx, func(tx *store.Tx) error {
		var err error
		p, err = protectionIn(tx, project, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", errProtectionUnknown, name, err)
	}
	return p, nil
}

// hiddenProtected is the protected branch that the ref full (a tag, or a
// ref outside refs/heads/) would hide (see shadowedBranches), when the
// caller may not push to it; "" otherwise. mayPushProtected is asked only
// when such a branch exists. An error means the caller must refuse.
func (w *Writer) hiddenProtected(ctx context.Context, project int64, full string, mayPushProtected func() bool) (string, error) {
	for _, b := range shadowedBranches(full) {
		p, err := w.protection(ctx, project, b)
		if err != nil {
			return "", err
		}
		if !p.allowsPush(mayPushProtected) {
			return b, nil
		}
	}
	return "", nil
}

// removeProject deletes a deleted project's protections and releases.
func (w *Writer) removeProject(ctx context.Context, project int64) error {
	key := store.IDString(project)
	return w.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := protections.DeleteBy(tx, "project", key); err != nil {
			return err
		}
		if err := unmarkWritten(tx, project); err != nil {
			return err
		}
		return removeProjectReleases(tx, key)
	})
}

// IsProtected implements repository.BranchProtection: whether a branch is
// protected (CI gives protected variables only to pipelines of protected
// branches). A store error is returned, never read as "not protected".
func (w *Writer) IsProtected(ctx context.Context, projectID int64, branch string) (bool, error) {
	p, err := w.protection(ctx, projectID, branch)
	return p != nil, err
}

// CreateBranch creates branch at the commit ref names, as the caller in
// ctx, who must be able to push; it returns the project and its
// repository, for the caller's view of the new branch.
func (w *Writer) CreateBranch(ctx context.Context, project, branch, ref string) (projects.ProjectInfo, *git.Repository, error) {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return info, nil, err
	}
	if !validBranchName(branch) {
		return info, nil, invalid("Branch name is invalid")
	}
	c, err := resolveCommit(repo, ref, info.DefaultBranch)
	if err != nil {
		return info, nil, invalid("Invalid reference name")
	}
	name := plumbing.NewBranchReferenceName(branch)
	if _, err := repo.Reference(name, false); err == nil {
		return info, nil, invalid("Branch already exists")
	}
	// Compare-and-set against "absent": a concurrent creation loses cleanly.
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: name, New: c.Hash}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return info, nil, invalid("Branch already exists")
		}
		return info, nil, err
	}
	return info, repo, nil
}

// DeleteBranch removes branch as the branches API does: the caller in
// ctx must be able to push, and neither the default branch nor a protected
// one may go. (Merges.DeleteBranch is merge requests' compare-and-set.)
func (w *Writer) DeleteBranch(ctx context.Context, project, branch string) error {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return err
	}
	name := plumbing.NewBranchReferenceName(branch)
	r, err := branchRef(repo, branch)
	if err != nil || r.Name() != name {
		return ErrBranchNotFound
	}
	if branch == info.DefaultBranch {
		return notAllowed("Cannot remove HEAD branch")
	}
	if p, err := w.protection(ctx, info.ID, branch); err != nil {
		return err
	} else if p != nil {
		return notAllowed("Protected branch cant be removed")
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: name, Old: r.Hash()}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return raced("The branch moved; try again")
		}
		return err
	}
	return nil
}

// DeleteTag removes tag, as the caller in ctx, who must be able to push;
// its release goes with it.
func (w *Writer) DeleteTag(ctx context.Context, project, tag string) error {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return err
	}
	name := plumbing.NewTagReferenceName(tag)
	r, err := tagRef(repo, tag)
	if err != nil || r.Name() != name {
		return ErrTagNotFound
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: name, Old: r.Hash()}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return raced("The tag moved; try again")
		}
		return err
	}
	// Its release went with it, in the transaction of its push event
	// (dropDeletedTagReleases).
	return nil
}

// Protect protects branch (on) with the older endpoint's two rules, or
// unprotects it, as the caller in ctx, who must administer the project;
// it returns the project and its repository, for the branch's view.
func (w *Writer) Protect(ctx context.Context, project, branch string, on, developersCanPush, developersCanMerge bool) (projects.ProjectInfo, *git.Repository, error) {
	info, repo, err := w.rd.open(ctx, project, projects.AdminProject)
	if err != nil {
		return info, nil, err
	}
	if _, err := branchRef(repo, branch); err != nil {
		return info, nil, ErrBranchNotFound
	}
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		p, err := protections.GetBy(tx, "branch", refKey(info.ID, branch))
		switch {
		case errors.Is(err, store.ErrNotFound) && on:
			return protections.Insert(tx, &Protection{ProjectID: info.ID, Name: branch,
				DevelopersCanPush: developersCanPush, DevelopersCanMerge: developersCanMerge})
		case err != nil:
			if errors.Is(err, store.ErrNotFound) {
				return nil // unprotecting an unprotected branch changes nothing
			}
			return err
		case on:
			// The older endpoint knows two levels per action, as GitLab
			// 9.x's did: developers, or masters (never "no one").
			p.DevelopersCanPush, p.DevelopersCanMerge = developersCanPush, developersCanMerge
			p.NoOneCanPush, p.NoOneCanMerge = false, false
			return protections.Update(tx, p)
		default:
			return protections.Delete(tx, p.ID)
		}
	})
	if err != nil {
		return info, nil, err
	}
	return info, repo, nil
}

// newTag is what a new tag is: its name, the revision it points at, a
// message (an annotated tag when not blank) and release notes.
type newTag struct {
	Name               string
	Ref                string
	Message            *string
	ReleaseDescription *string
}

// CreateTag creates tag t, as the caller in ctx, who must be able to push
// (a tag that would hide a protected branch needs PushProtected); it
// returns the project and its repository, for the tag's view.
func (w *Writer) CreateTag(ctx context.Context, project string, t newTag) (projects.ProjectInfo, *git.Repository, error) {
	info, repo, err := w.rd.open(ctx, project, projects.PushCode)
	if err != nil {
		return info, nil, err
	}
	// The objects written below are unreachable until the ref moves; a
	// repack in between would drop them as garbage. Hold the repository's
	// maintenance lock shared, as pushes do, until the ref has moved.
	maint := w.rd.store.maintenanceLock(info.ID)
	maint.RLock()
	defer maint.RUnlock()
	if !validTagName(t.Name) {
		return info, nil, &tagRefusal{"Tag name invalid"}
	}
	mayPushProtected := func() bool { ok, _ := w.rd.access.Can(ctx, project, projects.PushProtected); return ok }
	if branch, err := w.hiddenProtected(ctx, info.ID, plumbing.NewTagReferenceName(t.Name).String(), mayPushProtected); err != nil {
		return info, nil, err
	} else if branch != "" {
		return info, nil, &tagRefusal{"Tag " + t.Name + " would hide the protected branch " + branch}
	}
	c, err := resolveCommit(repo, t.Ref, info.DefaultBranch)
	if err != nil {
		return info, nil, &tagRefusal{"Target " + t.Ref + " is invalid"}
	}
	name := plumbing.NewTagReferenceName(t.Name)
	if _, err := repo.Reference(name, false); err == nil {
		return info, nil, &tagRefusal{"Tag " + t.Name + " already exists"}
	}
	target := c.Hash
	if t.Message != nil && strings.TrimSpace(*t.Message) != "" {
		pr := auth.FromContext(ctx)
		tagger := object.Signature{Name: pr.User.Username, Email: pr.User.Username + "@users.noreply.fennec", When: time.Now()}
		tag := &object.Tag{Name: t.Name, Tagger: tagger, Message: strings.TrimSpace(*t.Message) + "\n", TargetType: plumbing.CommitObject, Target: c.Hash}
		obj := repo.Storer.NewEncodedObject()
		if err := tag.Encode(obj); err != nil {
			return info, nil, err
		}
		if target, err = repo.Storer.SetEncodedObject(obj); err != nil {
			return info, nil, err
		}
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: name, New: target}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return info, nil, &tagRefusal{"Tag " + t.Name + " already exists"}
		}
		return info, nil, err
	}
	if t.ReleaseDescription != nil && *t.ReleaseDescription != "" {
		if err := w.db.Update(ctx, func(tx *store.Tx) error {
			return insertRelease(tx, newRelease(ctx, info.ID, t.Name, c.Hash.String(), t.ReleaseDescription))
		}); err != nil {
			return info, nil, err
		}
	}
	return info, repo, nil
}
