package internal

// The GitLab views of commits, branches and tags the adapter renders: the
// commit resource carries api.GitTime, which only the adapter knows.

import (
	"context"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// CommitDetail adds stats and status (single commit).
type CommitDetail struct {
	CommitView
	Stats  Stats   `json:"stats"`
	Status *string `json:"status"`
}

// detail is a commit with its line stats (the single-commit shape).
func detail(c *object.Commit) *CommitDetail {
	d := &CommitDetail{CommitView: commitView(c)}
	if st, err := c.Stats(); err == nil {
		for _, f := range st {
			d.Stats.Additions += f.Addition
			d.Stats.Deletions += f.Deletion
		}
		d.Stats.Total = d.Stats.Additions + d.Stats.Deletions
	}
	return d
}

// BranchView is the branch resource.
type BranchView struct {
	Name               string     `json:"name"`
	Commit             CommitView `json:"commit"`
	Merged             bool       `json:"merged"`
	Protected          bool       `json:"protected"`
	DevelopersCanPush  bool       `json:"developers_can_push"`
	DevelopersCanMerge bool       `json:"developers_can_merge"`
}

// TagView is the tag resource.
type TagView struct {
	Name    string       `json:"name"`
	Message *string      `json:"message"`
	Commit  CommitView   `json:"commit"`
	Release *ReleaseView `json:"release"`
}

func (rd *Reader) branchView(repo *git.Repository, name string, h plumbing.Hash) (BranchView, error) {
	c, err := peel(repo, h)
	if err != nil {
		return BranchView{}, err
	}
	return BranchView{Name: name, Commit: commitView(c)}, nil
}

func tagView(repo *git.Repository, r *plumbing.Reference) (TagView, error) {
	v := TagView{Name: r.Name().Short()}
	if t, err := repo.TagObject(r.Hash()); err == nil {
		// The object ends its message with a newline that nobody typed;
		// GitLab shows the message as it was given.
		msg := strings.TrimSuffix(t.Message, "\n")
		v.Message = &msg
	}
	c, err := peel(repo, r.Hash())
	if err != nil {
		return v, err
	}
	v.Commit = commitView(c)
	return v, nil
}

// detailOf is a commit with its line stats (the single-commit shape),
// counted with commitStats.
func (rd *Reader) detailOf(ctx context.Context, projectID int64, c *object.Commit) (*CommitDetail, error) {
	objs, err := rd.store.Objects(projectID)
	if err != nil {
		return nil, err
	}
	d := &CommitDetail{CommitView: commitView(c)}
	if st, err := commitStats(ctx, objs, c); err == nil {
		d.Stats = st
	}
	return d, nil
}

// CompareView is the spec's compare result.
type CompareView struct {
	Commit         *CommitView  `json:"commit"`
	Commits        []CommitView `json:"commits"`
	Diffs          []DiffView   `json:"diffs"`
	CompareTimeout bool         `json:"compare_timeout"`
	CompareSameRef bool         `json:"compare_same_ref"`
}
