package internal

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// checkPosition is the merge requests' notes.Kind.CheckPosition: a line
// comment's position must name commits of the project and a line of the
// diff from start_sha to head_sha (merge-base semantics, as the changes
// are shown): for a line with only new_line an added line, with only
// old_line a removed one, with both an unchanged line the diff shows.
// GitLab's versions of a merge request are not kept, so any commits the
// repository has are taken, as long as the line is in their diff.
func (s *Service) checkPosition(ctx context.Context, p projects.ProjectInfo, n target.Noteable, pos target.Position) error {
	m, err := s.load(ctx, p.ID, n.IID)
	if err != nil {
		return err
	}
	// A fork's commits are copied in, as for the changes.
	if err := s.Merges.Import(ctx, m.ProjectID, m.SourceProjectID, m.SHA); err != nil {
		return err
	}
	for _, sha := range []string{pos.BaseSHA, pos.StartSHA, pos.HeadSHA} {
		if _, err := s.Merges.Commits(ctx, p.ID, "", sha, 1); errors.Is(err, repository.ErrCommitNotFound) {
			return target.ErrBadPosition
		} else if err != nil {
			return err
		}
	}
	diffs, err := s.Merges.Diffs(ctx, p.ID, pos.StartSHA, pos.HeadSHA)
	if err != nil {
		return err
	}
	for _, d := range diffs {
		if d.NewPath == pos.NewPath && d.OldPath == pos.OldPath && diffHasLine(d.Diff, pos.OldLine, pos.NewLine) {
			return nil
		}
	}
	return target.ErrBadPosition
}

// diffHasLine reports whether a unified diff (hunks from "@@ -a,b +c,d @@")
// has the line: removed (old only), added (new only) or unchanged (both).
func diffHasLine(diff string, oldLine, newLine *int) bool {
	oldAt, newAt := 0, 0
	in := false
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "@@") {
			o, n, ok := hunkStarts(l)
			oldAt, newAt, in = o, n, ok
			continue
		}
		if !in || l == "" {
			continue
		}
		switch l[0] {
		case '+':
			if oldLine == nil && newLine != nil && *newLine == newAt {
				return true
			}
			newAt++
		case '-':
			if newLine == nil && oldLine != nil && *oldLine == oldAt {
				return true
			}
			oldAt++
		case ' ':
			if oldLine != nil && newLine != nil && *oldLine == oldAt && *newLine == newAt {
				return true
			}
			oldAt++
			newAt++
		}
	}
	return false
}

// hunkStarts reads the first old and new line numbers of a hunk header.
func hunkStarts(h string) (oldStart, newStart int, ok bool) {
	f := strings.Fields(h)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, false
	}
	start := func(s string) (int, bool) {
		s, _, _ = strings.Cut(s[1:], ",")
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	o, ok1 := start(f[1])
	n, ok2 := start(f[2])
	return o, n, ok1 && ok2
}

// unresolvedThreads refuses a merge (405, as any merge request that cannot
// be merged) while m has unresolved threads and its project allows merges
// only when all are resolved (only_allow_merge_if_all_discussions_are_resolved).
func (s *Service) unresolvedThreads(ctx context.Context, info projects.ProjectInfo, m *MR) error {
	if !info.OnlyAllowMergeIfAllDiscussionsAreResolved || s.Collab == nil {
		return nil
	}
	open, err := s.Collab.UnresolvedDiscussions(ctx, s.noteable(info, m))
	if err != nil {
		return err
	}
	if open > 0 {
		return mergerequest.ErrNotMergeable
	}
	return nil
}
