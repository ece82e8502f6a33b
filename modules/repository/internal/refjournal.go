package internal

// The ref journal makes a ref change and its push event one durable step.
// Refs live in files and events in the store, so no transaction holds both;
// instead every ref change Fennec makes (git push, API commits, branches,
// tags, cherry-picks) goes through moveRefs:
//
//  1. an entry per ref (project, ref, old, new, pusher) is committed to the
//     journal, before any ref moves;
//  2. the refs move (compare-and-set, Storage.UpdateRefs);
//  3. one transaction publishes a PushEvent through the outbox for every
//     ref that moved and removes the entries (moved or not).
//
// A crash between 2 and 3 leaves the entries behind, and the next start
// replays them: a ref now at the entry's new value moved, and gets its
// event; a ref still at the old value did not, and the entry is dropped.
// A failed commit of step 3 is retried by the work queue: step 1 also
// enqueues a job (core/workqueue, keyed by project), due after a grace
// period, that step 3 removes; if step 3 fails, the job publishes the
// events later, with the queue's backoff, and survives a restart with the
// entries. The three steps run under a per-project lock, so while
// Fennec runs a journaled ref is at its old or its new value when the entry
// is replayed. Once step 1 is done the rest runs on a context that the
// request's end does not cancel: a client that hangs up gets its push and
// its events all the same.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/event"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

// refChange is one journaled ref change: what its push event is built from.
type refChange struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	Ref       string `json:"ref"`
	Old       string `json:"old"` // 40 zeros: the ref did not exist
	New       string `json:"new"` // 40 zeros: the ref is deleted
	UserID    int64  `json:"user_id"`
	// The repository as the event names it, as it was when the ref moved.
	RepoName  string    `json:"repo_name"`
	WebURL    string    `json:"web_url"`
	CreatedAt time.Time `json:"created_at"`
	// JobID is the work queue's job that publishes the change's event if
	// step 3 fails (0 in entries journaled before the queue existed).
	JobID int64 `json:"job_id,omitempty"`
	// Node is the node that made the change (fennec.Node; "" before
	// nodes had names). While it lives the change is its own: another
	// node's replay would race its steps 2 and 3.
	Node string `json:"node,omitempty"`
}

func (c *refChange) RecordID() int64      { return c.ID }
func (c *refChange) SetRecordID(id int64) { c.ID = id }

var refJournal = store.NewTable[int64, refChange]("repository.ref_journal")

// journalLock is the lock of one project's journaled ref changes (not the
// ref storage's own lock, which UpdateRefs takes inside it).
func (w *Writer) journalLock(projectID int64) *sync.Mutex {
	w.jmu.Lock()
	defer w.jmu.Unlock()
	if w.jlocks == nil {
		w.jlocks = map[int64]*sync.Mutex{}
	}
	l := w.jlocks[projectID]
	if l == nil {
		l = &sync.Mutex{}
		w.jlocks[projectID] = l
	}
	return l
}

// moveRef is moveRefs for one ref: nil when the ref moved and its event is
// published (or, when publishing failed, kept in the journal: the error is
// logged and the change stands), ErrRefMoved when the ref was not at
// u.Old, another error when nothing could be journaled or moved.
func (w *Writer) moveRef(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, u RefUpdate) error {
	errs, err := w.moveRefs(ctx, info, repo, []RefUpdate{u}, false)
	if err != nil {
		return err
	}
	return errs[0]
}

// moveRefs journals ups, applies them (Storage.UpdateRefs) and publishes a
// push event for every ref that moved, removing the entries. errs[i] is
// UpdateRefs' outcome of ups[i]; errs is nil (and err set) when the journal
// could not be written, and then no ref moved. When the events cannot be
// published the refs have moved all the same: the failure is logged, the
// entries stay, and the events are published by a retry in the background
// (or the replay of the next start); err is nil then, since the change is
// made and its events are not lost.
func (w *Writer) moveRefs(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, ups []RefUpdate, atomic bool) (errs []error, err error) {
	uid := auth.FromContext(ctx).UserID()
	// Once begun, the step finishes even if the client goes away.
	reqCtx := ctx
	ctx = context.WithoutCancel(ctx)
	now := time.Now().UTC()
	changes := make([]*refChange, len(ups))
	for i, u := range ups {
		changes[i] = &refChange{ProjectID: info.ID, Ref: u.Name.String(), Old: u.Old.String(), New: u.New.String(),
			UserID: uid, RepoName: info.Name, WebURL: info.WebURL, CreatedAt: now, Node: w.nodeName()}
	}
	// The events are built before the refs move (the objects are in place
	// already), so that the project's lock is not held for the walk.
	evs := w.buildEvents(info.ID, repo, changes)

	l := w.journalLock(info.ID)
	l.Lock()
	defer l.Unlock()
	if err := w.db.Update(ctx, func(tx *store.Tx) error {
		job, err := w.retries.EnqueueAt(tx, projectKey(info.ID), nil, now.Add(w.retryGrace))
		if err != nil {
			return err
		}
		// Before any ref moves: a repository with content is one the
		// check for missing repositories looks for (written.go).
		if err := markWritten(tx, info.ID); err != nil {
			return err
		}
		for _, c := range changes {
			c.ID, c.JobID = 0, job
			if err := refJournal.Insert(tx, c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("repository: journal ref changes: %w", err)
	}
	hadBranches := hasBranches(repo)
	errs = w.rd.store.UpdateRefs(info.ID, repo, ups, atomic)
	if !hadBranches {
		w.adoptDefaultBranch(ctx, info, repo, ups, errs)
	}
	if w.afterMove != nil {
		// Tests stop here, as a crash would, or hang up meanwhile.
		if err := w.afterMove(reqCtx); err != nil {
			return errs, err
		}
	}
	moved := make([]bool, len(errs))
	for i, e := range errs {
		moved[i] = e == nil
	}
	if err := w.complete(ctx, changes, evs, moved, 0); err != nil {
		w.log.Error("repository: publishing push events failed; they stay in the ref journal and the work queue retries them",
			zap.Int64("project", info.ID), zap.Error(err))
		w.umu.Lock()
		w.unpublished[changes[0].JobID] = &unpublishedChanges{project: info.ID, changes: changes, evs: evs, moved: moved}
		w.umu.Unlock()
	}
	return errs, nil
}

// complete publishes the events of the changes that moved and removes
// every change's entry and its retry job (but settling, the job whose
// handler calls it), in one transaction.
func (w *Writer) complete(ctx context.Context, changes []*refChange, evs []event.PushEvent, moved []bool, settling int64) error {
	return w.db.Update(ctx, func(tx *store.Tx) error {
		if w.failPublish != nil {
			if err := w.failPublish(); err != nil {
				return err
			}
		}
		removed := map[int64]bool{0: true, settling: true}
		for i, c := range changes {
			if !removed[c.JobID] {
				removed[c.JobID] = true
				if err := w.retries.Remove(tx, c.JobID); err != nil {
					return err
				}
			}
			if moved[i] {
				if err := w.bus.Publish(tx, evs[i]); err != nil {
					return err
				}
			}
			if err := refJournal.Delete(tx, c.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return dropDeletedTagReleases(tx, changes, moved)
	})
}

// pushEventsQueue is the work queue of push events to publish again.
const pushEventsQueue = "repository.push_events"

// projectKey is a project's key in the module's work queues (push events,
// housekeeping): a project's jobs run in order.
func projectKey(projectID int64) string { return "project/" + store.IDString(projectID) }

// keyProject is the project of a projectKey; false for another key.
func keyProject(key string) (int64, bool) {
	id, err := strconv.ParseInt(strings.TrimPrefix(key, "project/"), 10, 64)
	return id, err == nil && strings.HasPrefix(key, "project/")
}

// defaultRetryGrace is how long after a ref change its retry job waits
// before it runs. moveRefs removes the job long before, unless publishing
// failed.
const defaultRetryGrace = 10 * time.Second

// journalRetry paces the retries: a second, doubling to a minute.
var journalRetry = backoff.Policy{Initial: time.Second, Max: time.Minute, Jitter: backoff.DefaultJitter}

// unpublishedChanges is what moveRefs knew of changes whose events it could
// not publish: which refs moved (refs that move on meanwhile do not
// confuse the retry) and the events built from them.
type unpublishedChanges struct {
	project int64
	changes []*refChange
	evs     []event.PushEvent
	moved   []bool
}

// publishAgain is the retry queue's handler: it publishes the events of
// the job's changes and removes their entries. Its job usually finds them
// gone (moveRefs removes the job with them), or known to this process,
// which failed to publish them; entries of an earlier run that the start's
// replay could not finish are replayed as the start does.
func (w *Writer) publishAgain(ctx context.Context, job *workqueue.Job) error {
	w.umu.Lock()
	u := w.unpublished[job.ID]
	w.umu.Unlock()
	if u != nil {
		l := w.journalLock(u.project)
		l.Lock()
		defer l.Unlock()
		if err := w.complete(ctx, u.changes, u.evs, u.moved, job.ID); err != nil {
			w.log.Error("repository: publishing push events failed again", zap.Int64("project", u.project), zap.Error(err))
			return err
		}
		w.umu.Lock()
		delete(w.unpublished, job.ID)
		w.umu.Unlock()
		return nil
	}
	project, ok := keyProject(job.Key)
	if !ok {
		return workqueue.Permanent(fmt.Errorf("repository: a push-event job with key %q", job.Key))
	}
	// Under the project's lock: a push may have finished them meanwhile.
	l := w.journalLock(project)
	l.Lock()
	defer l.Unlock()
	pending, err := w.journaled(ctx)
	if err != nil {
		return err
	}
	for i, c := range pending {
		if c.JobID == job.ID {
			if err := w.replay(ctx, c, pending[i+1:], job.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// journaled reads the ref journal, oldest entry first.
func (w *Writer) journaled(ctx context.Context) ([]*refChange, error) {
	var pending []*refChange
	err := w.db.View(ctx, func(tx *store.Tx) error {
		pending = pending[:0]
		return refJournal.Scan(tx, false, 0, func(c *refChange) (bool, error) {
			pending = append(pending, c)
			return true, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("repository: read the ref journal: %w", err)
	}
	return pending, nil
}

// nodeName is this node's name for the journal's entries.
func (w *Writer) nodeName() string {
	if w.node == nil {
		return ""
	}
	return w.node.Name()
}

// ownerAlive says whether the node that journaled c still runs (then c is
// in its hands: in flight, or with its retry job due). Only on a shared
// store can it be another node; this node's own entries are in flight.
func (w *Writer) ownerAlive(ctx context.Context, c *refChange) (bool, error) {
	if w.node == nil {
		return false, nil
	}
	return w.node.Alive(ctx, c.Node)
}

// replayJournal publishes the events of the ref changes an earlier run
// left unfinished (a crash after their refs moved), and drops the entries
// of changes that did not happen. It runs at start, before requests are
// served, and on a shared store when a node takes the lead: then the
// entries of nodes still alive are theirs and stay (their retry jobs
// finish them should their own step 3 fail).
func (w *Writer) replayJournal(ctx context.Context) error {
	pending, err := w.journaled(ctx)
	if err != nil {
		return err
	}
	for i, c := range pending {
		if alive, err := w.ownerAlive(ctx, c); err != nil {
			return err
		} else if alive {
			continue
		}
		// The entry's retry job stays: it finds the entries of its job
		// that this replay could not finish, or none.
		if err := w.replay(ctx, c, pending[i+1:], c.JobID); err != nil {
			// Kept for its retry job, or the next start; one bad entry
			// stops no other.
			w.log.Error("repository: replaying a ref change failed", zap.Int64("project", c.ProjectID),
				zap.String("ref", c.Ref), zap.Error(err))
		}
	}
	return nil
}

// replay finishes one journaled change of an earlier run, given the
// entries journaled after it: its event if its ref moved, and the removal
// of its entry (and of its retry job, but settling's).
func (w *Writer) replay(ctx context.Context, c *refChange, later []*refChange, settling int64) error {
	moved, err := w.replayed(ctx, c, later)
	if err != nil {
		return err
	}
	var evs []event.PushEvent
	if moved {
		repo, err := w.rd.store.Open(ctx, c.ProjectID)
		if err != nil {
			return err
		}
		evs = w.buildEvents(c.ProjectID, repo, []*refChange{c})
	} else {
		evs = make([]event.PushEvent, 1)
	}
	if err := w.complete(ctx, []*refChange{c}, evs, []bool{moved}, settling); err != nil {
		return err
	}
	w.log.Info("repository: replayed an unfinished ref change", zap.Int64("project", c.ProjectID),
		zap.String("ref", c.Ref), zap.Bool("moved", moved))
	return nil
}

// replayed says whether a journaled change happened: its ref is at its new
// value, or a later journaled change of the same ref started from that
// value (one that followed while this one's events could not be published).
// A ref at its old value, or at a value no entry explains (changed outside
// Fennec), did not move as far as the journal can tell; neither did the ref
// of a removed project.
func (w *Writer) replayed(ctx context.Context, c *refChange, later []*refChange) (bool, error) {
	if _, err := os.Stat(w.rd.store.Path(c.ProjectID)); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	repo, err := w.rd.store.Open(ctx, c.ProjectID)
	if err != nil {
		return false, err
	}
	cur := plumbing.ZeroHash
	ref, err := repo.Storer.Reference(plumbing.ReferenceName(c.Ref))
	switch {
	case err == nil:
		cur = ref.Hash()
	case !errors.Is(err, plumbing.ErrReferenceNotFound):
		return false, err
	}
	if cur.String() == c.New {
		return true, nil
	}
	// Before the old value is looked at: a ref created and deleted again
	// is back at its old value, yet moved twice.
	for _, l := range later {
		if l.ProjectID == c.ProjectID && l.Ref == c.Ref && l.Old == c.New {
			return true, nil
		}
	}
	if cur.String() == c.Old {
		return false, nil
	}
	w.log.Warn("repository: a journaled ref is at neither its old nor its new value; no event",
		zap.Int64("project", c.ProjectID), zap.String("ref", c.Ref), zap.String("at", cur.String()))
	return false, nil
}

// buildEvents builds the push event of each change, reading the pushed
// objects and the project's other branches from repo.
func (w *Writer) buildEvents(projectID int64, repo *git.Repository, changes []*refChange) []event.PushEvent {
	var read readFunc
	if objs, err := w.rd.store.Objects(projectID); err == nil {
		read = objs.Read
	} else {
		w.log.Warn("repository: push event without commits: objects", zap.Int64("project", projectID), zap.Error(err))
	}
	// Read once for all the changes (a mirror push may bring thousands).
	branches, err := listRefs(repo)
	if err != nil {
		w.log.Warn("repository: push event: list branches", zap.Int64("project", projectID), zap.Error(err))
	}
	evs := make([]event.PushEvent, len(changes))
	for i, c := range changes {
		evs[i] = pushEvent(c, read, branches, w.log)
	}
	return evs
}

// maxEventCommits is how many commits a push event lists (the total is
// always given); maxEventWalk bounds the commits walked to count them.
const (
	maxEventCommits = 20
	maxEventWalk    = 100000
)

// pushEvent is the one builder of push events: for a branch, the commits
// the change brought (those not reachable from the old value, or for a new
// branch from any other branch), newest 20 listed oldest first with their
// files; none for a tag or a deletion. read may be nil (no commits then).
func pushEvent(c *refChange, read readFunc, branches []gitserve.Ref, log *zap.Logger) event.PushEvent {
	name := plumbing.ReferenceName(c.Ref)
	ev := event.PushEvent{ObjectKind: event.BranchPush, ProjectID: c.ProjectID, UserID: c.UserID, Ref: c.Ref,
		Before: c.Old, After: c.New, Commits: []event.PushCommit{},
		Repository: event.PushRepo{Name: c.RepoName, URL: c.WebURL + ".git", Homepage: c.WebURL}}
	if name.IsTag() {
		ev.ObjectKind = event.TagPush
		return ev
	}
	if ev.Deleted() || !name.IsBranch() || read == nil {
		return ev
	}
	newHash := plumbing.NewHash(c.New)
	var exclude []plumbing.Hash
	if !ev.Created() {
		exclude = append(exclude, plumbing.NewHash(c.Old))
	} else {
		for _, r := range branches {
			if r.Name.IsBranch() && r.Name != name {
				exclude = append(exclude, r.Hash)
			}
		}
	}
	newest, total, err := revWalk(read, []plumbing.Hash{newHash}, exclude, maxEventCommits, maxEventWalk)
	if err != nil {
		log.Warn("repository: push event: list pushed commits", zap.Error(err))
		return ev
	}
	ev.TotalCommitsCount = total
	for i := len(newest) - 1; i >= 0; i-- {
		e := newest[i]
		pc := event.PushCommit{ID: e.hash.String(), Message: e.commit.message,
			Timestamp: time.Unix(e.commit.committer.when, 0).UTC().Format(time.RFC3339),
			URL:       c.WebURL + "/commit/" + e.hash.String()}
		pc.Author.Name, pc.Author.Email = e.commit.author.name, e.commit.author.email
		pc.Added, pc.Modified, pc.Removed, err = fileChanges(read, e.commit)
		if err != nil {
			log.Warn("repository: push event: files of a pushed commit", zap.Error(err))
		}
		// [] rather than null, as GitLab sends them.
		pc.Added, pc.Modified, pc.Removed = nonNil(pc.Added), nonNil(pc.Modified), nonNil(pc.Removed)
		ev.Commits = append(ev.Commits, pc)
	}
	return ev
}

// adoptDefaultBranch points HEAD (and the project's default_branch) at a
// branch just created in a repository that had none: the project's default
// branch if it came, else master, else main, else the first. It is the one
// rule for every way a first branch appears (a push over HTTP or SSH, the
// files and commits APIs), so that default_branch never names a branch
// that does not exist while another does.
func (w *Writer) adoptDefaultBranch(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, ups []RefUpdate, errs []error) {
	var created []string
	for i, u := range ups {
		if errs[i] == nil && u.Name.IsBranch() && !u.New.IsZero() {
			created = append(created, u.Name.Short())
		}
	}
	if len(created) == 0 {
		return
	}
	pick := created[0]
	for _, want := range []string{"main", "master", info.DefaultBranch} { // the last found wins
		if slices.Contains(created, want) {
			pick = want
		}
	}
	head := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(pick))
	if err := repo.Storer.SetReference(head); err != nil {
		w.log.Error("repository: set HEAD", zap.Int64("project", info.ID), zap.Error(err))
		return
	}
	if err := w.state.SetDefaultBranch(ctx, info.ID, pick); err != nil {
		w.log.Error("repository: set the default branch", zap.Int64("project", info.ID), zap.Error(err))
	}
}
