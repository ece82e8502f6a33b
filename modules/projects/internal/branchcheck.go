package internal

import (
	"context"
	"sync"

	"github.com/fennec-forge/fennec/modules/projects/project"
)

// branchChecker holds the registered checker; nil while no module
// registered one (a bundle without repositories: default_branch is then
// taken as given, there being nothing to check it against).
type branchChecker struct {
	once    sync.Once
	checker project.BranchChecker
}

// SetBranchCheckers takes the checkers the modules registered, once, while
// the app is assembled. Only the first is used: there is one owner of
// repositories.
func (s *Service) SetBranchCheckers(checkers []project.BranchChecker) {
	s.branches.once.Do(func() {
		for _, c := range checkers {
			if c != nil && s.branches.checker == nil {
				s.branches.checker = c
			}
		}
	})
}

// defaultBranchChange is the branch an edit may make the default: "" when
// the edit names none, or names one the repository does not have. GitLab
// 9.x ignores such a name (it moves HEAD only to an existing branch and
// keeps the rest of the edit), and so do we; a repository with no branch
// yet keeps its default too, since the first branch pushed decides it.
func (s *Service) defaultBranchChange(ctx context.Context, projectID int64, asked *string) (string, error) {
	if asked == nil {
		return "", nil
	}
	name := *asked
	if name == "" {
		return "", nil
	}
	if s.branches.checker == nil {
		return name, nil
	}
	ok, err := s.branches.checker.BranchExists(ctx, projectID, name)
	if err != nil || !ok {
		return "", err
	}
	return name, nil
}

// branchNames are the first limit of the project's branches by name, nil
// when the registered checker cannot list them (project.BranchLister) or
// there is none.
func (s *Service) branchNames(ctx context.Context, projectID int64, limit int) ([]string, error) {
	l, ok := s.branches.checker.(project.BranchLister)
	if !ok {
		return nil, nil
	}
	return l.BranchNames(ctx, projectID, limit)
}
