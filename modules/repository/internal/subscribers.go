package internal

import (
	"context"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Subscribers follow the projects' lives: a repository is created with its
// project, copied when the project is forked and removed with it. Each
// handler may run more than once and leaves the same result.
func Subscribers(s *Storage, st *Statuses, w *Writer) []events.Subscriber {
	return []events.Subscriber{
		events.Subscribe("repository.projects", func(ctx context.Context, ev projects.ProjectEvent) error {
			switch ev.Action {
			case "created":
				if ev.ImportURL != "" {
					// Importing arrives with git over HTTP; until then the
					// project starts empty and says so in the log.
					s.log.Warn("repository import not available yet; created empty", zap.Int64("project", ev.ProjectID))
				}
				return s.create(ev.ProjectID, "master")
			case "forked":
				return s.fork(ev.ForkedFromID, ev.ProjectID)
			case "deleted":
				if err := st.removeProject(ctx, ev.ProjectID); err != nil {
					return err
				}
				if err := w.removeProject(ctx, ev.ProjectID); err != nil {
					return err
				}
				return s.remove(ev.ProjectID)
			}
			return nil
		}),
	}
}
