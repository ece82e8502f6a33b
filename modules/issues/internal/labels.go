package internal

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// hasControl says whether s holds a control character (C0, DEL, C1): a
// name is one line of text, and a NUL or an escape sequence in it would
// reach every page, feed, mail and terminal that shows it.
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// colorRule is GitLab 9.x's ColorValidator: "#" and 3 or 6 hex digits.
var colorRule = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}){1,2}$`)

// checkLabelName is the Label model's validation: present, no comma (the
// lists are comma-separated), at most 255 characters, valid UTF-8 without
// control characters.
func checkLabelName(n string) error {
	switch {
	case target.InvalidText(n) || hasControl(n) || strings.ContainsRune(n, ','):
		return &target.InvalidError{Field: "title", Text: "is invalid"}
	case strings.TrimSpace(n) == "":
		return &target.InvalidError{Field: "title", Text: "can't be blank"}
	case utf8.RuneCountInString(n) > 255:
		return &target.InvalidError{Field: "title", Text: "is too long (maximum is 255 characters)"}
	}
	return nil
}

func checkColor(c string) error {
	if !colorRule.MatchString(c) {
		return &target.InvalidError{Field: "color", Text: "must be a valid color code"}
	}
	return nil
}

// labelCounted is a label as a project sees it (info, resolved as uid):
// its counts are of the project's issues that the caller may see (a
// group label's issues in other projects count elsewhere).
func labelCounted(tx *store.Tx, l *Label, info projects.ProjectInfo, uid int64) (issue.Label, error) {
	r := labelRecord(l)
	r.Counted = true
	var err error
	r.OpenIssuesCount, r.ClosedIssuesCount, err = labelCountsIn(tx, l, info, uid)
	return r, err
}

// labelRecord is the contract's record of a stored label (no counts).
func labelRecord(l *Label) issue.Label {
	r := issue.Label{ID: issue.LabelID(l.ID), ProjectID: l.ProjectID, GroupID: l.GroupID, Name: l.Name,
		Color: l.Color, Description: l.Description}
	if l.GroupID == 0 {
		// GitLab keeps a group label's priority per project; Fennec has
		// none for them.
		r.Priority = l.Priority
	}
	return r
}

// labelCountsIn counts a label's open and closed issues of the project
// (info, resolved as uid) that the caller may see: a confidential issue
// counts only for those who may see it (canSeeConfidential).
func labelCountsIn(tx *store.Tx, l *Label, info projects.ProjectInfo, uid int64) (open, closed int, err error) {
	count := func(kind byte) int {
		if l.GroupID == 0 {
			return getLabelCount(tx, l.ID, kind)
		}
		return readCount(tx, labelCounts, groupLabelCountKey(l.ID, info.ID, kind))
	}
	open, closed = count(countOpen), count(countClosed)
	if info.Level >= projects.Reporter {
		return open, closed, nil
	}
	confOpen, confClosed := count(countConfidentialOpen), count(countConfidentialClosed)
	if confOpen+confClosed == 0 {
		return open, closed, nil
	}
	open -= confOpen
	closed -= confClosed
	if uid == 0 {
		return open, closed, nil
	}
	// The confidential issues the caller wrote or is assigned to count
	// again: only this case reads issues, those in both the label's index
	// and the caller's (author, assignee) ones, so the cost follows the
	// caller's issues with the label, not the label's.
	ids, err := issues.IDsBy(tx, "label", store.IDString(l.ID))
	if err != nil {
		return open, closed, err
	}
	mine := map[int64]bool{}
	for _, index := range []string{"author", "assignee"} {
		own, err := issues.IDsBy(tx, index, store.IDString(uid))
		if err != nil {
			return open, closed, err
		}
		for _, id := range own {
			mine[id] = true
		}
	}
	for _, id := range ids {
		if !mine[id] {
			continue
		}
		i, err := issues.Get(tx, id)
		if err != nil {
			return open, closed, err
		}
		if i.ProjectID != info.ID || !i.Confidential || !canSeeConfidential(info, i, uid) {
			continue
		}
		if i.Open() {
			open++
		} else {
			closed++
		}
	}
	return open, closed, nil
}

// labelsOf are a project's labels and those it inherits from its groups,
// nearest group first (GitLab's include_ancestor_groups; without it, the
// owning group's only, as GitLab's LabelsFinder does).
func labelsOf(tx *store.Tx, info projects.ProjectInfo, ancestors bool) ([]*Label, error) {
	ids, err := labels.IDsBy(tx, "project", store.IDString(info.ID))
	if err != nil {
		return nil, err
	}
	groups := info.GroupIDs
	if !ancestors && len(groups) > 1 {
		groups = groups[:1]
	}
	for _, g := range groups {
		more, err := labels.IDsBy(tx, "group", store.IDString(g))
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	list := make([]*Label, 0, len(ids))
	for _, id := range ids {
		l, err := labels.Get(tx, id)
		if err != nil {
			return nil, err
		}
		list = append(list, l)
	}
	return list, nil
}

// sortLabels orders labels by name (GitLab's title order); of two with one
// name (a project's and a group's), the one found first stays first.
func sortLabels(list []*Label) {
	sort.SliceStable(list, func(a, b int) bool { return list[a].Name < list[b].Name })
}

// seenLabel is the label named name that a project (its id and GroupIDs)
// sees: its own, else its nearest group's; ErrLabelNotFound when none.
func seenLabel(tx *store.Tx, project int64, groups []int64, name string) (*Label, error) {
	l, err := labels.GetBy(tx, "name", store.IDString(project)+"/"+name)
	if !errors.Is(err, store.ErrNotFound) {
		return l, err
	}
	for _, g := range groups {
		l, err := labels.GetBy(tx, "name", groupLabelKey(g)+"/"+name)
		if !errors.Is(err, store.ErrNotFound) {
			return l, err
		}
	}
	return nil, ErrLabelNotFound
}

// labelsNamed are every label named name that a project sees (its own and
// its groups'): a filter by name matches an issue carrying any of them.
func labelsNamed(tx *store.Tx, project int64, groups []int64, name string) ([]int64, error) {
	var out []int64
	keys := []string{store.IDString(project)}
	for _, g := range groups {
		keys = append(keys, groupLabelKey(g))
	}
	for _, k := range keys {
		l, err := labels.GetBy(tx, "name", k+"/"+name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, l.ID)
	}
	return out, nil
}

// adminLabels resolves :id for changing labels: Reporter+, not archived.
func (s *Service) adminLabels(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	info, err := s.access.Require(ctx, ref, projects.ReadProject)
	if err != nil {
		return info, err
	}
	if info.Level < projects.Reporter || info.Archived {
		return info, projects.ErrForbidden
	}
	return info, nil
}

// labelMatches is GitLab's label search: the name or the description
// contains the text, in any case.
func labelMatches(l *Label, search string) bool {
	return search == "" || strings.Contains(strings.ToLower(l.Name), search) || strings.Contains(strings.ToLower(l.Description), search)
}

// Labels implements issue.Service.
func (s *Service) Labels(ctx context.Context, project string, q issue.LabelQuery) ([]issue.Label, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadProject)
	if err != nil {
		return nil, 0, err
	}
	search := strings.ToLower(q.Search)
	out := []issue.Label{}
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		all, err := labelsOf(tx, info, q.Ancestors)
		if err != nil {
			return err
		}
		list := all[:0]
		for _, l := range all {
			if labelMatches(l, search) {
				list = append(list, l)
			}
		}
		sortLabels(list)
		total = len(list)
		uid := auth.FromContext(ctx).UserID()
		for _, l := range target.Window(list, target.Page{Offset: q.Offset, Limit: q.Limit}) {
			r, err := labelCounted(tx, l, info, uid)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, total, err
}

// GetLabel implements issue.Service: one label, named (or numbered), with
// the counts the caller may see, as in the list. (Later GitLab has it,
// and python-gitlab's labels.get uses it.) Like the list it finds the
// labels the project inherits from its groups; editing and deleting
// through the project find its own only, as GitLab's do.
func (s *Service) GetLabel(ctx context.Context, project, label string) (issue.Label, error) {
	info, err := s.access.Require(ctx, project, projects.ReadProject)
	if err != nil {
		return issue.Label{}, err
	}
	var out issue.Label
	err = s.db.View(ctx, func(tx *store.Tx) error {
		l, err := seenLabel(tx, info.ID, info.GroupIDs, label)
		if errors.Is(err, ErrLabelNotFound) {
			l, err = labelNumbered(tx, info, label)
		}
		if err != nil {
			return err
		}
		out, err = labelCounted(tx, l, info, auth.FromContext(ctx).UserID())
		return err
	})
	return out, err
}

// requireNameAndColor is the missing-parameter error of a label create,
// project or group: both are required, and GitLab names every one missing.
func requireNameAndColor(name, color *string) error {
	var params []string
	if name == nil {
		params = append(params, "name")
	}
	if color == nil {
		params = append(params, "color")
	}
	if len(params) > 0 {
		return missing(params...)
	}
	return nil
}

// CreateLabel implements issue.Service.
func (s *Service) CreateLabel(ctx context.Context, project string, in issue.LabelFields) (issue.Label, error) {
	if err := requireNameAndColor(in.Name, in.Color); err != nil {
		return issue.Label{}, err
	}
	info, err := s.adminLabels(ctx, project)
	if err != nil {
		return issue.Label{}, err
	}
	name := strings.TrimSpace(*in.Name)
	if err := checkLabelName(name); err != nil {
		return issue.Label{}, err
	}
	if err := checkColor(*in.Color); err != nil {
		return issue.Label{}, err
	}
	l := &Label{ProjectID: info.ID, Name: name, Color: *in.Color, Priority: in.Priority, CreatedAt: s.now()}
	if in.Description != nil {
		l.Description = *in.Description
	}
	var out issue.Label
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		// GitLab's API refuses a name any label the project sees already
		// has, its groups' included (create_label looks in
		// available_labels_for, ancestor groups and all): 409 "Label
		// already exists", as for a project label of that name.
		if _, err := seenLabel(tx, l.ProjectID, info.GroupIDs, name); !errors.Is(err, ErrLabelNotFound) {
			if err == nil {
				err = ErrLabelExists
			}
			return err
		}
		if err := labels.Insert(tx, l); err != nil {
			return err
		}
		out, err = labelCounted(tx, l, info, 0)
		return err
	})
	return out, err
}

// labelNumbered finds, by its id, a label the project sees (its own or a
// group's of info.GroupIDs).
func labelNumbered(tx *store.Tx, info projects.ProjectInfo, ref string) (*Label, error) {
	id, err := strconv.ParseUint(ref, 10, 63)
	if err != nil {
		return nil, ErrLabelNotFound
	}
	l, err := labels.Get(tx, int64(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrLabelNotFound
	}
	if err != nil {
		return nil, err
	}
	if (l.GroupID == 0 && l.ProjectID == info.ID) || (l.GroupID != 0 && slices.Contains(info.GroupIDs, l.GroupID)) {
		return l, nil
	}
	return nil, ErrLabelNotFound
}

// labelNamed finds a project's label by name, or by id when no label has
// that name.
func labelNamed(tx *store.Tx, project int64, name string) (*Label, error) {
	l, err := labels.GetBy(tx, "name", store.IDString(project)+"/"+name)
	if errors.Is(err, store.ErrNotFound) {
		if id, perr := strconv.ParseUint(name, 10, 63); perr == nil {
			if byID, err := labels.Get(tx, int64(id)); err == nil && byID.ProjectID == project {
				return byID, nil
			}
		}
		return nil, ErrLabelNotFound
	}
	return l, err
}

// UpdateLabel implements issue.Service: label is the project's own
// label's name (or id), in.Name its new name.
func (s *Service) UpdateLabel(ctx context.Context, project, label string, in issue.LabelFields) (issue.Label, error) {
	if in.Name == nil && in.Color == nil && in.Description == nil && in.Priority == nil {
		return issue.Label{}, nothingGiven("new_name", "color", "description", "priority")
	}
	info, err := s.adminLabels(ctx, project)
	if err != nil {
		return issue.Label{}, err
	}
	var newName string
	if in.Name != nil {
		newName = strings.TrimSpace(*in.Name)
		if err := checkLabelName(newName); err != nil {
			return issue.Label{}, err
		}
	}
	if in.Color != nil {
		if err := checkColor(*in.Color); err != nil {
			return issue.Label{}, err
		}
	}
	var out issue.Label
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := labelNamed(tx, info.ID, label)
		if err != nil {
			return err
		}
		if newName != "" && newName != l.Name {
			// A name one of the project's groups has is taken too, as on
			// create. (GitLab's model refuses it with a 400 naming the
			// group, and looks at the owning group only; Fennec answers
			// as its create does.)
			if _, err := seenLabel(tx, info.ID, info.GroupIDs, newName); !errors.Is(err, ErrLabelNotFound) {
				if err == nil {
					err = ErrLabelExists
				}
				return err
			}
			l.Name = newName
		}
		if in.Color != nil {
			l.Color = *in.Color
		}
		if in.Description != nil {
			l.Description = *in.Description
		}
		if in.Priority != nil {
			l.Priority = in.Priority
			if *in.Priority < 0 {
				l.Priority = nil
			}
		}
		if err := labels.Update(tx, l); err != nil {
			return err
		}
		out, err = labelCounted(tx, l, info, 0)
		return err
	})
	return out, err
}

// DeleteLabel implements issue.Service.
func (s *Service) DeleteLabel(ctx context.Context, project, label string) error {
	info, err := s.adminLabels(ctx, project)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := labelNamed(tx, info.ID, label)
		if err != nil {
			return err
		}
		return s.removeLabel(tx, l)
	})
}

// removeLabel deletes a label and takes it off its issues.
func (s *Service) removeLabel(tx *store.Tx, l *Label) error {
	list, err := issues.AllBy(tx, "label", store.IDString(l.ID))
	if err != nil {
		return err
	}
	for _, i := range list {
		i.LabelIDs = removeID(i.LabelIDs, l.ID)
		if err := issues.Update(tx, i); err != nil {
			return err
		}
	}
	if err := dropLabelCounts(tx, l.ID); err != nil {
		return err
	}
	return labels.Delete(tx, l.ID)
}

func removeID(list []int64, id int64) []int64 {
	out := list[:0:0]
	for _, x := range list {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
