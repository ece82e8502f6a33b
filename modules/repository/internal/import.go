package internal

// Import from import_url: a project created with one gets its repository
// cloned (every branch and tag) in the background, its import_status going
// scheduled -> started -> finished or failed (with import_error). Only
// http, https and git URLs reach here (the projects module refuses others
// with 400), so no local path or file:// URL can be read. The clone is made
// beside the repository's place and moved in only if the project's
// repository is still empty; credentials in the URL never reach the logs or
// import_error.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/modules/projects"
)

// importTimeout bounds one import.
const importTimeout = 30 * time.Minute

// Importer runs imports in the background, one at a time.
type Importer struct {
	st    *Storage
	state projects.RepositoryState
	log   *zap.Logger

	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	running map[int64]bool
}

// NewImporter builds the importer; stopping the app cancels imports.
func NewImporter(lc fx.Lifecycle, st *Storage, state projects.RepositoryState, log *zap.Logger) *Importer {
	ctx, cancel := context.WithCancel(context.Background())
	im := &Importer{st: st, state: state, log: log.Named("import"), ctx: ctx, cancel: cancel, running: map[int64]bool{}}
	lc.Append(fx.Hook{OnStop: func(context.Context) error {
		im.cancel()
		im.wg.Wait()
		return nil
	}})
	return im
}

// Start begins importing rawURL into the project's repository, unless an
// import of it is running already.
func (im *Importer) Start(projectID int64, rawURL string) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.running[projectID] || im.ctx.Err() != nil {
		return
	}
	im.running[projectID] = true
	im.wg.Add(1)
	go func() {
		defer im.wg.Done()
		defer func() {
			im.mu.Lock()
			delete(im.running, projectID)
			im.mu.Unlock()
		}()
		im.run(projectID, rawURL)
	}()
}

func (im *Importer) run(projectID int64, rawURL string) {
	ctx, cancel := context.WithTimeout(im.ctx, importTimeout)
	defer cancel()
	_ = im.state.SetImportStatus(ctx, projectID, projects.ImportStarted, "")
	start := time.Now()
	err := im.clone(ctx, projectID, rawURL)
	status, msg := projects.ImportFinished, ""
	if err != nil {
		status, msg = projects.ImportFailed, redact(err.Error(), rawURL)
		im.log.Warn("import failed", zap.Int64("project", projectID), zap.String("url", redactURL(rawURL)), zap.String("error", msg))
	} else {
		im.log.Info("imported", zap.Int64("project", projectID), zap.String("url", redactURL(rawURL)), zap.Duration("took", time.Since(start)))
	}
	if err := im.state.SetImportStatus(context.Background(), projectID, status, msg); err != nil {
		im.log.Error("record import status", zap.Int64("project", projectID), zap.Error(err))
	}
}

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
	repo, err := git.PlainCloneContext(ctx, tmp, true, &git.CloneOptions{URL: rawURL, Mirror: true, Tags: git.AllTags})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil // nothing to import; the project keeps its empty repository
	}
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("the import took longer than %s", importTimeout)
		}
		return fmt.Errorf("could not clone: %w", err)
	}
	if repo != nil {
		// A mirror's refs are ours now; nothing points back at the source.
		if cfg, err := repo.Config(); err == nil {
			cfg.Remotes = map[string]*config.RemoteConfig{}
			_ = repo.SetConfig(cfg)
		}
		pruneForeignRefs(repo)
	}
	// Move it in only over an empty repository (a push may have come first).
	im.st.mu.Lock()
	defer im.st.mu.Unlock()
	if _, err := os.Stat(filepath.Join(dst, "HEAD")); err == nil {
		if !isEmpty(dst) {
			return errors.New("the repository received pushes before the import finished; import skipped")
		}
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	im.st.forgetObjects(projectID)
	return os.Rename(tmp, dst)
}

// pruneForeignRefs keeps branches and tags only (a mirror also copies the
// source's refs/merge-requests/... and the like).
func pruneForeignRefs(repo *git.Repository) {
	iter, err := repo.Storer.IterReferences()
	if err != nil {
		return
	}
	var drop []plumbing.ReferenceName
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		n := r.Name()
		if n != plumbing.HEAD && !n.IsBranch() && !n.IsTag() {
			drop = append(drop, n)
		}
		return nil
	})
	iter.Close()
	for _, n := range drop {
		_ = repo.Storer.RemoveReference(n)
	}
}

// redactURL hides credentials in a URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("*****")
	return u.String()
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
