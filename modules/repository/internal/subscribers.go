package internal

import (
	"context"
	"os"
	"path/filepath"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/modules/projects"
)

// SubscribersDeps are what Subscribers is built from.
type SubscribersDeps struct {
	fennec.In
	Storage  *Storage
	Statuses *Statuses
	Writer   *Writer
	Importer *Importer
}

// Subscribers follow the projects' lives: a repository is imported when its
// project is created from a URL (an empty one is made when first touched:
// written.go), copied when the project is forked and removed with it. Each
// handler may run more than once and leaves the same result.
func Subscribers(d SubscribersDeps) []events.Subscriber {
	s, st, w, im := d.Storage, d.Statuses, d.Writer, d.Importer
	// Only a project's birth, fork and death concern its repository.
	lifecycle := func(ev projects.ProjectEvent) bool {
		return ev.Action == projects.ProjectCreated || ev.Action == projects.ProjectForked || ev.Action == projects.ProjectDeleted
	}
	return []events.Subscriber{
		events.Only(events.Subscribe("repository.projects", func(ctx context.Context, ev projects.ProjectEvent) error {
			switch ev.Action {
			case projects.ProjectCreated:
				if err := s.created(ctx, im.state, ev.ProjectID); err != nil {
					return err
				}
				if ev.ImportURL != "" {
					// The event names the source without its credentials;
					// the projects module keeps the whole URL, sealed.
					u, err := im.state.ImportURL(ctx, ev.ProjectID)
					if err != nil {
						return err
					}
					if u != "" {
						im.Start(ev.ProjectID, u)
					}
				}
				return nil
			case projects.ProjectForked:
				if err := s.fork(ev.ForkedFromID, ev.ProjectID); err != nil {
					return err
				}
				// Recorded once the copy is there (see written.go); a fork
				// of a source never used has none.
				if _, err := os.Stat(filepath.Join(s.Path(ev.ProjectID), "HEAD")); err != nil {
					return nil
				}
				return s.markWritten(ctx, ev.ProjectID)
			case projects.ProjectDeleted:
				if err := st.removeProject(ctx, ev.ProjectID); err != nil {
					return err
				}
				if err := w.removeProject(ctx, ev.ProjectID); err != nil {
					return err
				}
				return s.remove(ev.ProjectID)
			}
			return nil
		}), lifecycle),
	}
}
