package internal

// Import from import_url: a project created with one gets its repository
// fetched (every branch and tag) in the background, its import_status going
// scheduled -> started -> finished or failed (with import_error).
//
// The source is a user's choice of destination, so:
//   - Only http, https and git URLs reach here (the projects module refuses
//     others, and hosts that are literally local or private addresses, with
//     400), and every connection goes through core/netguard: a name that
//     resolves to a loopback, private or link-local address fails when
//     connecting (for git://, the name is resolved once, checked, and that
//     address dialled), unless the administrator allows local requests.
//   - Whatever keeps the source's refs from being read (refused, closed or
//     filtered port, a server that is no git server, DNS failure, a refused
//     destination, a wrong password) is one import_error,
//     errImportUnreachable: the import is no port scanner. The details go
//     to the log, without credentials.
//   - The pack goes through gitpack.Receive, as a push does: bounded by
//     max_push_bytes, objects checked, connectivity checked.
//   - Imports run through a bounded queue: importWorkers at a time, up to
//     importQueueSize waiting (their import_status stays "scheduled"); past
//     that, an import fails at once with errImportQueueFull. On shutdown,
//     running imports are cancelled and waiting ones taken off the queue,
//     all failing with errImportShutdown (nothing resumes them).
//
// The fetch is made into a bare repository beside the project's and moved
// in only if the project's repository is still empty.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/netguard"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

const (
	// importTimeout bounds one import.
	importTimeout = 30 * time.Minute
	// importConnectTimeout bounds reaching the source and reading its refs.
	importConnectTimeout = time.Minute
	// importWorkers imports run at once; importQueueSize more may wait.
	importWorkers   = 2
	importQueueSize = 32
)

// The import_error of a failed import.
const (
	errImportUnreachable = "Unable to access repository: the remote could not be reached, is not a git repository, or refused the credentials"
	errImportQueueFull   = "Too many imports are waiting; create the project again later"
	errImportShutdown    = "The server stopped before the import finished; create the project again"
	errImportReceive     = "The import failed while receiving the repository"
	errImportPushed      = "The repository received pushes before the import finished; import skipped"
)

// unreachableError is a failure before the source's refs were read.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return "unreachable: " + e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// importJob is one import waiting or running.
type importJob struct {
	projectID int64
	url       string
}

// Importer runs imports in the background, importWorkers at a time.
type Importer struct {
	st       *Storage
	state    projects.RepositoryState
	log      *zap.Logger
	guard    *netguard.Guard
	client   *guardedHTTP
	maxBytes int64

	ctx    context.Context
	cancel context.CancelFunc
	queue  chan importJob
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending map[int64]bool // queued or running
	stopped bool

	stopWithin time.Duration // how long Run's stop may take
}

// NewImporter builds the importer; stopping the app cancels imports (Run).
func NewImporter(st *Storage, state projects.RepositoryState, cfg config.Config, set Config, log *zap.Logger) *Importer {
	im := newImporter(st, state, netguard.New(cfg.AllowLocalRequests), set.MaxPushBytes, log, importWorkers, importQueueSize)
	im.stopWithin = cfg.ShutdownTimeout
	return im
}

var _ fennec.Runner = (*Importer)(nil)

// Run waits for the app to stop, then cancels the imports and marks those
// still queued as failed, within the shutdown timeout.
func (im *Importer) Run(ctx context.Context) error {
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), max(im.stopWithin, time.Second))
	defer cancel()
	return im.stop(stop)
}

func newImporter(st *Storage, state projects.RepositoryState, guard *netguard.Guard, maxBytes int64, log *zap.Logger, workers, queue int) *Importer {
	ctx, cancel := context.WithCancel(context.Background())
	im := &Importer{
		st: st, state: state, log: log.Named("import"), guard: guard, maxBytes: maxBytes,
		client: newGuardedHTTP(guard),
		ctx:    ctx, cancel: cancel, queue: make(chan importJob, queue), pending: map[int64]bool{},
	}
	for range workers {
		im.wg.Add(1)
		go im.work()
	}
	return im
}

// work runs queued imports until the importer stops.
func (im *Importer) work() {
	defer im.wg.Done()
	for {
		select {
		case <-im.ctx.Done():
			return
		case j := <-im.queue:
			im.run(j)
			im.mu.Lock()
			delete(im.pending, j.projectID)
			im.mu.Unlock()
		}
	}
}

// stop cancels running imports, waits for them, and fails the waiting ones.
func (im *Importer) stop(ctx context.Context) error {
	im.mu.Lock()
	im.stopped = true
	im.mu.Unlock()
	im.cancel()
	done := make(chan struct{})
	go func() { im.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		select {
		case j := <-im.queue:
			im.finish(j, projects.ImportFailed, errImportShutdown)
		default:
			im.client.closeIdle()
			return nil
		}
	}
}

// Start queues an import of rawURL into the project's repository, unless
// one is queued or running already. A full queue fails the import at once.
func (im *Importer) Start(projectID int64, rawURL string) {
	im.mu.Lock()
	if im.stopped || im.pending[projectID] {
		im.mu.Unlock()
		return
	}
	queued := false
	select {
	case im.queue <- importJob{projectID: projectID, url: rawURL}:
		im.pending[projectID] = true
		queued = true
	default:
	}
	im.mu.Unlock()
	if !queued {
		im.log.Warn("import queue full", zap.Int64("project", projectID), zap.String("url", redactURL(rawURL)))
		im.finish(importJob{projectID: projectID, url: rawURL}, projects.ImportFailed, errImportQueueFull)
	}
}

// finish records an import's outcome.
func (im *Importer) finish(j importJob, status, msg string) {
	if err := im.state.SetImportStatus(context.Background(), j.projectID, status, msg); err != nil {
		im.log.Error("record import status", zap.Int64("project", j.projectID), zap.Error(err))
	}
}

func (im *Importer) run(j importJob) {
	ctx, cancel := context.WithTimeout(im.ctx, importTimeout)
	defer cancel()
	if ctx.Err() != nil {
		im.finish(j, projects.ImportFailed, errImportShutdown)
		return
	}
	_ = im.state.SetImportStatus(ctx, j.projectID, projects.ImportStarted, "")
	start := time.Now()
	err := im.clone(ctx, j.projectID, j.url)
	if err == nil {
		im.log.Info("imported", zap.Int64("project", j.projectID), zap.String("url", redactURL(j.url)), zap.Duration("took", time.Since(start)))
		im.finish(j, projects.ImportFinished, "")
		return
	}
	im.log.Warn("import failed", zap.Int64("project", j.projectID), zap.String("url", redactURL(j.url)),
		zap.String("error", redact(err.Error(), j.url)))
	im.finish(j, projects.ImportFailed, im.message(err))
}

// message is the import_error of err.
func (im *Importer) message(err error) string {
	var unreachable *unreachableError
	switch {
	case im.ctx.Err() != nil:
		return errImportShutdown
	case errors.As(err, &unreachable):
		return errImportUnreachable
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("The import took longer than %s", importTimeout)
	case errors.Is(err, gitpack.ErrTooLarge):
		return fmt.Sprintf("The repository is larger than the limit of %d bytes (max_push_bytes)", im.maxBytes)
	case errors.Is(err, errPushedMeanwhile):
		return errImportPushed
	}
	return errImportReceive
}

var errPushedMeanwhile = errors.New("the repository received pushes before the import finished")

func (im *Importer) clone(ctx context.Context, projectID int64, rawURL string) error {
	dst := im.st.Path(projectID)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".import-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	repo, err := git.PlainInitWithOptions(tmp, &git.PlainInitOptions{Bare: true})
	if err != nil {
		return err
	}
	progress := func(n int64, done bool) {
		msg := "import in progress"
		if done {
			msg = "import received its pack"
		}
		im.log.Info(msg, zap.Int64("project", projectID), zap.String("url", redactURL(rawURL)), zap.Int64("bytes", n))
	}
	head, err := im.fetch(ctx, tmp, repo, rawURL, progress)
	if err != nil {
		return err
	}
	if head == "" {
		return nil // nothing to import; the project keeps its empty repository
	}
	// Move it in only over an empty repository (a push may have come first).
	if err := im.moveIn(projectID, tmp, dst); err != nil {
		return err
	}
	// Recorded once it is there: a repository with content is one the
	// check for missing repositories looks for (written.go).
	if err := im.st.markWritten(ctx, projectID); err != nil {
		return err
	}
	return im.state.SetDefaultBranch(ctx, projectID, head)
}

func (im *Importer) moveIn(projectID int64, tmp, dst string) error {
	im.st.removals.RLock()
	defer im.st.removals.RUnlock()
	im.st.mu.Lock()
	defer im.st.mu.Unlock()
	im.st.refWrites.RLock()
	defer im.st.refWrites.RUnlock()
	if _, err := os.Stat(filepath.Join(dst, "HEAD")); err == nil {
		if !isEmpty(dst) {
			return errPushedMeanwhile
		}
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	im.st.forgetObjects(projectID)
	return os.Rename(tmp, dst)
}

// fetch reads the source's branches and tags into the bare repository at
// dir and returns the branch its HEAD names (or the first branch); "" when
// the source has none.
func (im *Importer) fetch(ctx context.Context, dir string, repo *git.Repository, rawURL string, progress func(bytes int64, done bool)) (string, error) {
	sess, err := im.session(ctx, rawURL)
	if err != nil {
		return "", &unreachableError{err}
	}
	defer sess.Close()
	actx, cancel := context.WithTimeout(ctx, importConnectTimeout)
	adv, err := sess.AdvertisedReferencesContext(actx)
	cancel()
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return "", nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &unreachableError{err}
	}
	all, err := adv.AllReferences()
	if err != nil {
		return "", &unreachableError{err}
	}
	// Branches and tags only (a mirror would also copy the source's
	// refs/merge-requests/... and the like), with names a push could make.
	var refs []*plumbing.Reference
	var wants []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, r := range all {
		n := r.Name()
		if r.Type() != plumbing.HashReference || !(n.IsBranch() || n.IsTag()) || !validPushRef(n.String(), false) {
			continue
		}
		refs = append(refs, r)
		if !seen[r.Hash()] {
			seen[r.Hash()] = true
			wants = append(wants, r.Hash())
		}
	}
	if len(wants) == 0 {
		return "", nil
	}
	req := packp.NewUploadPackRequestFromCapabilities(adv.Capabilities)
	req.Wants = wants
	if adv.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return "", fmt.Errorf("upload-pack: %w", err)
	}
	defer resp.Close()
	var pack io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	counted := &progressReader{r: pack, every: importProgressEvery, report: func(n int64) { progress(n, false) }}
	objs, err := gitpack.Open(dir, gitpack.Options{})
	if err != nil {
		return "", err
	}
	defer objs.Close()
	in, err := objs.Receive(counted, gitpack.ReceiveOptions{MaxBytes: im.maxBytes})
	progress(counted.n, true)
	if err != nil {
		return "", fmt.Errorf("receive: %w", err)
	}
	defer func() { _ = in.Discard() }()
	if err := objs.CheckConnected(in, wants); err != nil {
		return "", fmt.Errorf("receive: %w", err)
	}
	if err := objs.Install(in); err != nil {
		return "", err
	}
	for _, r := range refs {
		if err := repo.Storer.SetReference(r); err != nil {
			return "", err
		}
	}
	head := headBranch(all, refs)
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(head))); err != nil {
		return "", err
	}
	return head, nil
}

// headBranch is the branch the source's HEAD names, if it was imported;
// else master, else the first branch by name; else "master" (only tags).
func headBranch(all map[plumbing.ReferenceName]*plumbing.Reference, refs []*plumbing.Reference) string {
	branches := map[string]bool{}
	first := ""
	for _, r := range refs {
		if r.Name().IsBranch() {
			b := r.Name().Short()
			branches[b] = true
			if first == "" || b < first {
				first = b
			}
		}
	}
	if h := all[plumbing.HEAD]; h != nil && h.Type() == plumbing.SymbolicReference && h.Target().IsBranch() && branches[h.Target().Short()] {
		return h.Target().Short()
	}
	if branches["master"] || first == "" {
		return "master"
	}
	return first
}

// session opens an upload-pack session with the source, every connection
// through the guard.
func (im *Importer) session(ctx context.Context, rawURL string) (transport.UploadPackSession, error) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil {
		return nil, err
	}
	switch ep.Protocol {
	case "http", "https":
		return im.client.uploadPackSession(ep)
	case "git":
		// go-git's git:// client dials by itself: give it an address the
		// guard checked, so the name cannot resolve elsewhere meanwhile.
		ip, err := im.guard.Resolve(ctx, ep.Host)
		if err != nil {
			return nil, err
		}
		ep.Host = ip.String()
		return gitproto.DefaultClient.NewUploadPackSession(ep, nil)
	}
	return nil, fmt.Errorf("unsupported scheme %q", ep.Protocol)
}

// redactURL hides credentials in a URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	scheme, rest, _ := strings.Cut(u.String(), "://")
	return scheme + "://*****@" + rest
}

// redact removes the URL's password (and the raw URL) from a message.
func redact(msg, raw string) string {
	safe := redactURL(raw)
	msg = strings.ReplaceAll(msg, raw, safe)
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "*****")
		}
	}
	return msg
}

// importProgressEvery is how often a long import says how far it got.
const importProgressEvery = 5 * time.Second

// progressReader counts what an import receives and reports it at most
// once per interval, so that the log shows a long import moving.
type progressReader struct {
	r      io.Reader
	n      int64
	every  time.Duration
	last   time.Time
	report func(n int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if now := time.Now(); p.last.IsZero() {
		p.last = now
	} else if now.Sub(p.last) >= p.every {
		p.last = now
		p.report(p.n)
	}
	return n, err
}
