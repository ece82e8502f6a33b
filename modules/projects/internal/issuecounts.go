package internal

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/modules/projects/project"
)

// issueCounter holds the registered counter; nil (every count 0) while no
// module registered one.
type issueCounter struct {
	once    sync.Once
	counter project.OpenIssuesCounter
}

// SetOpenIssuesCounters takes the counters the modules registered, once,
// while the app is assembled (before it serves; nothing reads it
// concurrently then). Only the first is used: there is one owner of issues.
func (s *Service) SetOpenIssuesCounters(counters []project.OpenIssuesCounter) {
	s.issues.once.Do(func() {
		for n, c := range counters {
			if c == nil {
				continue
			}
			if s.issues.counter != nil {
				s.log.Warn("projects: more than one open issues counter registered; the first is used", zap.Int("index", n))
				continue
			}
			s.issues.counter = c
		}
	})
}

// openIssuesCount is p's open_issues_count: 0 when the issues feature is
// off (its issues cannot be read then, so their number is not told either)
// or no counter is registered. A failing read is logged and shown as 0
// rather than failing the whole project view.
func (s *Service) openIssuesCount(ctx context.Context, p *Project) int {
	if !p.IssuesEnabled || s.issues.counter == nil {
		return 0
	}
	n, err := s.issues.counter.OpenIssuesCount(ctx, p.ID)
	if err != nil {
		s.log.Warn("projects: reading open_issues_count failed", zap.Int64("project", p.ID), zap.Error(err))
		return 0
	}
	return n
}
