package internal

// diff_refs: the three commits a line comment's position names (base_sha,
// start_sha, head_sha), as later GitLab shows them on a merge request.
// An API client needs them to start a thread on a line of the diff (POST
// .../discussions with position), and the Changes tab uses the same.

import (
	"context"

	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// DiffRefsView is a merge request's diff_refs.
type DiffRefsView struct {
	BaseSHA  string `json:"base_sha"`
	HeadSHA  string `json:"head_sha"`
	StartSHA string `json:"start_sha"`
}

// diffRefs are m's: the source's head, the revision it is compared with
// (baseOf) and their merge base. nil when the merge request has no head
// yet or its target cannot be read.
func (s *Service) diffRefs(ctx context.Context, m mergerequest.MergeRequest) *DiffRefsView {
	stored, err := s.load(ctx, m.ProjectID, int64(m.IID))
	if err != nil || stored.SHA == "" {
		return nil
	}
	start := s.baseOf(ctx, stored)
	if start == "" {
		return nil
	}
	return &DiffRefsView{BaseSHA: s.mergeBase(ctx, stored.ProjectID, start, stored.SHA), HeadSHA: stored.SHA, StartSHA: start}
}

// mergeBase is the position's base_sha: the commit the merge request's
// commits grew from (the parent of its range outside it, when there is
// one), else start. It reads at most maxCommits commits.
func (s *Service) mergeBase(ctx context.Context, project int64, start, head string) string {
	list, err := s.Merges.Commits(ctx, project, start, head, maxCommits)
	if err != nil {
		return start
	}
	if len(list) == 0 {
		return head
	}
	in := map[string]bool{}
	for _, c := range list {
		in[c.ID] = true
	}
	found := ""
	for _, c := range list {
		for _, p := range c.ParentIDs {
			if in[p] {
				continue
			}
			if found != "" && found != p {
				return start
			}
			found = p
		}
	}
	if found == "" {
		return start
	}
	return found
}
