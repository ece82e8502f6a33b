package internal

import (
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxCompareCommits bounds the commits listed in one comparison; past it the
// answer says compare_timeout, as GitLab does when a comparison is too big.
const maxCompareCommits = 10000

// reverse turns the walk's newest-first order into oldest first.
func reverse(cs []*object.Commit) {
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
}
