package internal

import (
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/modules/projects"
)

// commitOnBranch is what cherry-pick and revert start from: a commit of
// the project and the branch to commit onto, with the repository's
// maintenance lock held shared until unlock.
type commitOnBranch struct {
	info   projects.ProjectInfo
	repo   *git.Repository
	commit *object.Commit
	head   *plumbing.Reference
	unlock func()
}
