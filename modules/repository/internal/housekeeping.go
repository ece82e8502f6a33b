package internal

// Housekeeping: every push adds a pack, and many small packs make reads
// slower and leave no reachability index. After HousekeepingPushes pushes
// to a repository (and once a day for any repository with more than one
// pack or with loose objects), a background repack writes the closure of
// the refs as one closed pack (reusing the stored entries) and removes what
// it replaces. Readers are never blocked: they keep the packs they opened.
// Pushes to that repository wait for the repack's end (the maintenance
// lock), so a push never installs objects the repack is about to drop.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

// Housekeeper repacks repositories in the background. Repacks are jobs of
// a work queue (core/workqueue, keyed by project, one at a time): a repack
// asked for survives a restart, one that fails is tried again with
// backoff, and one that keeps failing ends as a dead letter.
type Housekeeper struct {
	st    *Storage
	db    *store.DB
	log   *zap.Logger
	every int
	queue *workqueue.Queue

	mu     sync.Mutex
	pushes map[int64]int
	// beforeRepack, when a test sets it, is called by the worker before
	// each repack (SetBeforeRepack).
	beforeRepack func(projectID int64)
}

// housekeepingQueue is the work queue of repacks.
const housekeepingQueue = "repository.housekeeping"

// repackRetry paces the retries of a failed repack: a minute, doubling to
// an hour.
var repackRetry = backoff.Policy{Initial: time.Minute, Max: time.Hour, Jitter: backoff.DefaultJitter}

// repackAttempts is how often a repack is tried before it is a dead letter.
const repackAttempts = 5

// NewHousekeeper builds the housekeeper; its worker runs with the app (Run).
func NewHousekeeper(st *Storage, db *store.DB, cfg Config, log *zap.Logger) *Housekeeper {
	hk := &Housekeeper{st: st, db: db, log: log.Named("housekeeping"), every: cfg.HousekeepingPushes,
		pushes: map[int64]int{}}
	if hk.every <= 0 {
		hk.every = 50
	}
	// One repack at a time: a repack reads and writes a whole repository.
	// A repack may take many minutes, but on nodes sharing a store the
	// queue renews a running job's lease, so the lease can be short: the
	// repack a dead leader had in hand runs again a minute later.
	hk.queue = workqueue.New(db, housekeepingQueue, repackRetry, hk.repackJob, workqueue.WithLogger(hk.log),
		workqueue.WithConcurrency(1), workqueue.WithMaxAttempts(repackAttempts), workqueue.WithLease(time.Minute))
	return hk
}

var _ fennec.Runner = (*Housekeeper)(nil)

// Run repacks what pushes and users queue and, daily, what is due, until
// ctx ends; a repack in progress finishes first.
func (hk *Housekeeper) Run(ctx context.Context) error {
	daily := make(chan error, 1)
	go func() {
		daily <- fennec.Every(ctx, 24*time.Hour, 24*time.Hour, time.Minute, func(ctx context.Context) {
			for _, id := range hk.st.untidy() {
				if _, err := hk.enqueue(ctx, id); err != nil {
					hk.log.Warn("queue a daily repack", zap.Int64("project", id), zap.Error(err))
				}
			}
		})
	}()
	err := hk.queue.Run(ctx)
	return errors.Join(err, <-daily)
}

// Pushed counts a push; every HousekeepingPushes-th queues a repack.
func (hk *Housekeeper) Pushed(ctx context.Context, projectID int64) {
	hk.mu.Lock()
	hk.pushes[projectID]++
	due := hk.pushes[projectID] >= hk.every
	if due {
		hk.pushes[projectID] = 0
	}
	hk.mu.Unlock()
	if due {
		// The push is done whatever happens here; the daily pass
		// catches a repack that could not be queued.
		if _, err := hk.enqueue(context.WithoutCancel(ctx), projectID); err != nil {
			hk.log.Warn("queue a repack", zap.Int64("project", projectID), zap.Error(err))
		}
	}
}

// Request queues the housekeeping of a repository that a user asked for
// (POST /projects/:id/housekeeping): a repack by the worker, as after
// HousekeepingPushes pushes, whose count starts again. It is refused,
// false, while that repository's housekeeping is queued or running.
func (hk *Housekeeper) Request(ctx context.Context, projectID int64) (bool, error) {
	queued, err := hk.enqueue(ctx, projectID)
	if queued {
		hk.mu.Lock()
		hk.pushes[projectID] = 0
		hk.mu.Unlock()
	}
	return queued, err
}

// enqueue queues a repack of the project unless one is queued or running
// (a job stays in its key's line until it is done): false then.
func (hk *Housekeeper) enqueue(ctx context.Context, projectID int64) (bool, error) {
	queued := false
	err := hk.db.Update(ctx, func(tx *store.Tx) error {
		queued = false
		keys, err := workqueue.KeysIn(tx, housekeepingQueue)
		if err != nil {
			return err
		}
		if slices.Contains(keys, projectKey(projectID)) {
			return nil
		}
		queued = true
		return hk.queue.Enqueue(tx, projectKey(projectID), nil)
	})
	return queued, err
}

// SetBeforeRepack has fn called by the worker before each repack it
// runs; for tests, which hold a housekeeping in progress.
func (hk *Housekeeper) SetBeforeRepack(fn func(projectID int64)) {
	hk.mu.Lock()
	defer hk.mu.Unlock()
	hk.beforeRepack = fn
}

// repackJob is the queue's handler: the repack of the job's project. A
// project whose repository is gone (removed meanwhile) has nothing to do.
func (hk *Housekeeper) repackJob(ctx context.Context, job *workqueue.Job) error {
	id, ok := keyProject(job.Key)
	if !ok {
		return workqueue.Permanent(fmt.Errorf("housekeeping: a job with key %q", job.Key))
	}
	hk.mu.Lock()
	before := hk.beforeRepack
	hk.mu.Unlock()
	if before != nil {
		before(id)
	}
	if _, err := os.Stat(hk.st.Path(id)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := hk.Repack(ctx, id); err != nil {
		hk.log.Warn("repack failed", zap.Int64("project", id), zap.Int("attempt", job.Attempts), zap.Error(err))
		return err
	}
	return nil
}

// RepackResult says what a repack did.
type RepackResult struct {
	Objects     int
	PacksBefore int
	Duration    time.Duration
}

// Repack consolidates a project's repository into one closed pack.
func (hk *Housekeeper) Repack(ctx context.Context, projectID int64) (RepackResult, error) {
	start := time.Now()
	// A backup running keeps the packs it listed: the repack waits.
	hk.st.removals.RLock()
	defer hk.st.removals.RUnlock()
	l := hk.st.maintenanceLock(projectID)
	l.Lock()
	defer l.Unlock()
	objs, err := hk.st.Objects(projectID)
	if err != nil {
		return RepackResult{}, err
	}
	before := countPacks(hk.st.Path(projectID))
	tips, err := hk.st.refTips(ctx, projectID)
	if err != nil {
		return RepackResult{}, err
	}
	all, err := gitserve.Enumerate(objs, tips)
	if err != nil {
		return RepackResult{}, fmt.Errorf("walk: %w", err)
	}
	if len(all) > 0 {
		if err := objs.Repack(all, tips); err != nil {
			return RepackResult{}, err
		}
	}
	res := RepackResult{Objects: len(all), PacksBefore: before, Duration: time.Since(start)}
	hk.log.Info("repacked", zap.Int64("project", projectID), zap.Int("objects", res.Objects),
		zap.Int("packs_before", before), zap.Duration("took", res.Duration))
	return res, nil
}

// fsckProgressMin is how many objects a repository needs before Fsck
// reports its progress.
const fsckProgressMin = 10000

// Fsck checks that every object reachable from the refs is present and
// intact (read whole, deltas applied, and its id recomputed), writing what
// it finds to out.
func (hk *Housekeeper) Fsck(ctx context.Context, projectID int64, out io.Writer) error {
	objs, err := hk.st.Objects(projectID)
	if err != nil {
		return err
	}
	tips, err := hk.st.refTips(ctx, projectID)
	if err != nil {
		return err
	}
	all, err := gitserve.Enumerate(objs, tips)
	if err != nil {
		return fmt.Errorf("broken reachability: %w", err)
	}
	bad := 0
	// Progress, as plain lines (the output may cross the admin socket):
	// one per tenth of a large repository's objects.
	step := 0
	if len(all) >= fsckProgressMin {
		step = (len(all) + 9) / 10
		fmt.Fprintf(out, "fsck: %d objects reachable from %d refs\n", len(all), len(tips))
	}
	for i, h := range all {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if step > 0 && i > 0 && i%step == 0 {
			fmt.Fprintf(out, "fsck: %d/%d objects checked\n", i, len(all))
		}
		t, data, err := objs.Read(h)
		if err != nil {
			fmt.Fprintf(out, "error: %s: %v\n", h, err)
			bad++
			continue
		}
		got, err := gitpack.HashObject(t, data)
		switch {
		case err != nil:
			fmt.Fprintf(out, "error: %s: %v\n", h, err)
			bad++
		case got != h:
			fmt.Fprintf(out, "error: %s: content hashes to %s\n", h, got)
			bad++
		}
	}
	fmt.Fprintf(out, "checked %d objects reachable from %d refs: %d bad\n", len(all), len(tips), bad)
	if bad > 0 {
		return fmt.Errorf("%d bad objects", bad)
	}
	return nil
}

// refTips are the distinct values of every ref of a project's repository.
func (s *Storage) refTips(ctx context.Context, projectID int64) ([]gitpack.Hash, error) {
	repo, err := s.Open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	refs, err := listRefs(repo)
	if err != nil {
		return nil, err
	}
	seen := map[plumbing.Hash]bool{}
	var tips []gitpack.Hash
	for _, r := range refs {
		if !seen[r.Hash] {
			seen[r.Hash] = true
			tips = append(tips, r.Hash)
		}
	}
	sort.Slice(tips, func(i, j int) bool { return tips[i].String() < tips[j].String() })
	return tips, nil
}

// listRefs lists the refs under refs/ that point at objects, sorted by name.
func listRefs(repo *git.Repository) ([]gitserve.Ref, error) {
	iter, err := repo.Storer.IterReferences()
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	var refs []gitserve.Ref
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && strings.HasPrefix(r.Name().String(), "refs/") {
			refs = append(refs, gitserve.Ref{Name: r.Name(), Hash: r.Hash()})
		}
		return nil
	})
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, err
}

// maintenanceLock is held by a repack (exclusively) and by pushes (shared).
func (s *Storage) maintenanceLock(projectID int64) *sync.RWMutex {
	s.locksMu.Lock()
	defer s.locksMu.Unlock()
	if s.maint == nil {
		s.maint = map[int64]*sync.RWMutex{}
	}
	l := s.maint[projectID]
	if l == nil {
		l = &sync.RWMutex{}
		s.maint[projectID] = l
	}
	return l
}

// untidy lists the projects whose repositories have several packs or loose
// objects. Repository directories are named by a hash of the id, so the
// ids come from the open object stores and from a scan is not possible;
// the daily pass covers the repositories used most recently (up to
// maxOpenStores); the others were repacked every housekeeping_pushes
// pushes.
func (s *Storage) untidy() []int64 {
	s.objMu.Lock()
	ids := make([]int64, 0, len(s.objects))
	for id := range s.objects {
		ids = append(ids, id)
	}
	s.objMu.Unlock()
	var out []int64
	for _, id := range ids {
		p := s.Path(id)
		if countPacks(p) > 1 || hasLooseObjects(p) {
			out = append(out, id)
		}
	}
	return out
}

func countPacks(repo string) int {
	m, _ := filepath.Glob(filepath.Join(repo, "objects", "pack", "pack-*.idx"))
	return len(m)
}

func hasLooseObjects(repo string) bool {
	dirs, err := os.ReadDir(filepath.Join(repo, "objects"))
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if d.IsDir() && len(d.Name()) == 2 {
			if es, err := os.ReadDir(filepath.Join(repo, "objects", d.Name())); err == nil && len(es) > 0 {
				return true
			}
		}
	}
	return false
}
