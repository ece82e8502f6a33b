package internal

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// colorRule is GitLab 9.x's ColorValidator: "#" and 3 or 6 hex digits.
var colorRule = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}){1,2}$`)

// checkLabelName is the Label model's validation: present, no comma (the
// lists are comma-separated), at most 255 characters, valid UTF-8 without
// control characters.
func checkLabelName(n string) error {
	switch {
	case invalidText(n) || hasControl(n) || strings.ContainsRune(n, ','):
		return api.FieldErrors{"title": {"is invalid"}}
	case strings.TrimSpace(n) == "":
		return api.FieldErrors{"title": {"can't be blank"}}
	case utf8.RuneCountInString(n) > 255:
		return api.FieldErrors{"title": {"is too long (maximum is 255 characters)"}}
	}
	return nil
}

func checkColor(c string) error {
	if !colorRule.MatchString(c) {
		return api.FieldErrors{"color": {"must be a valid color code"}}
	}
	return nil
}

// labelView shows a label as a project sees it (info, resolved as uid):
// its counts are of the project's issues that the caller may see (a
// group label's issues in other projects count elsewhere).
func (s *Service) labelView(tx *store.Tx, l *Label, info projects.ProjectInfo, uid int64) (LabelView, error) {
	v := LabelView{ID: l.ID, Name: l.Name, Color: l.Color, Description: strPtr(l.Description), IsProjectLabel: l.GroupID == 0}
	if l.GroupID == 0 {
		// GitLab keeps a group label's priority per project; Fennec has
		// none for them.
		v.Priority = l.Priority
	}
	var err error
	v.OpenIssuesCount, v.ClosedIssuesCount, err = labelCountsIn(tx, l, info, uid)
	return v, err
}

// labelCountsIn counts a label's open and closed issues of the project
// (info, resolved as uid) that the caller may see: a confidential issue
// counts only for those who may see it (canSeeConfidential).
func labelCountsIn(tx *store.Tx, l *Label, info projects.ProjectInfo, uid int64) (open, closed int, err error) {
	count := func(kind byte) int {
		if l.GroupID == 0 {
			return getLabelCount(tx, l.ID, kind)
		}
		return readCount(tx, labelCounts, groupLabelCountKey(l.ID, uint64(info.ID), kind))
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
	// again: only this case reads the label's issues.
	ids, err := issues.IDsBy(tx, "label", u64(l.ID))
	if err != nil {
		return open, closed, err
	}
	for _, id := range ids {
		i, err := issues.Get(tx, id)
		if err != nil {
			return open, closed, err
		}
		if i.ProjectID != uint64(info.ID) || !i.Confidential || !canSeeConfidential(info, i, uid) {
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
	ids, err := labels.IDsBy(tx, "project", i64(info.ID))
	if err != nil {
		return nil, err
	}
	groups := info.GroupIDs
	if !ancestors && len(groups) > 1 {
		groups = groups[:1]
	}
	for _, g := range groups {
		more, err := labels.IDsBy(tx, "group", i64(g))
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
func seenLabel(tx *store.Tx, project uint64, groups []int64, name string) (*Label, error) {
	l, err := labels.GetBy(tx, "name", u64(project)+"/"+name)
	if !errors.Is(err, store.ErrNotFound) {
		return l, err
	}
	for _, g := range groups {
		l, err := labels.GetBy(tx, "name", groupLabelKey(uint64(g))+"/"+name)
		if !errors.Is(err, store.ErrNotFound) {
			return l, err
		}
	}
	return nil, ErrLabelNotFound
}

// labelsNamed are every label named name that a project sees (its own and
// its groups'): a filter by name matches an issue carrying any of them.
func labelsNamed(tx *store.Tx, project uint64, groups []int64, name string) ([]uint64, error) {
	var out []uint64
	keys := []string{u64(project)}
	for _, g := range groups {
		keys = append(keys, groupLabelKey(uint64(g)))
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

type labelsOutput struct {
	api.PageHeaders
	Body []LabelView
}

type labelOutput struct {
	Body *LabelView
}

type labelBody struct {
	Name        *string `json:"name,omitempty"`
	NewName     *string `json:"new_name,omitempty"`
	Color       *string `json:"color,omitempty"`
	Description *string `json:"description,omitempty"`
	Priority    *int    `json:"priority,omitempty"`
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

// parseBoolParam reads a boolean query parameter given as text (so that
// its default may be true): "" is def.
func parseBoolParam(name, v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, api.Invalid(name)
	}
	return b, nil
}

// labelMatches is GitLab's label search: the name or the description
// contains the text, in any case.
func labelMatches(l *Label, search string) bool {
	return search == "" || strings.Contains(strings.ToLower(l.Name), search) || strings.Contains(strings.ToLower(l.Description), search)
}

func (s *Service) listLabels(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
	IncludeAncestorGroups string `query:"include_ancestor_groups" doc:"true (default): the labels of every group above the project too; false: of its own group only"`
	Search                string `query:"search" doc:"Name or description contains this"`
}) (*labelsOutput, error) {
	ancestors, err := parseBoolParam("include_ancestor_groups", in.IncludeAncestorGroups, true)
	if err != nil {
		return nil, err
	}
	info, err := s.access.Require(ctx, in.ID, projects.ReadProject)
	if err != nil {
		return nil, err
	}
	search := strings.ToLower(in.Search)
	out := &labelsOutput{Body: []LabelView{}}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		all, err := labelsOf(tx, info, ancestors)
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
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		uid := auth.FromContext(ctx).UserID()
		for _, l := range api.Window(list, in.PageParams) {
			v, err := s.labelView(tx, l, info, uid)
			if err != nil {
				return err
			}
			out.Body = append(out.Body, v)
		}
		return nil
	})
	return out, err
}

// getLabelByPath is one label, named (or numbered) in the path, with the
// counts the caller may see, as in the list. (Later GitLab has it, and
// python-gitlab's labels.get uses it.) Like the list it finds the labels
// the project inherits from its groups; editing and deleting through the
// project find its own only, as GitLab's do.
func (s *Service) getLabelByPath(ctx context.Context, in *LabelPath) (*labelOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadProject)
	if err != nil {
		return nil, err
	}
	out := &labelOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		l, err := seenLabel(tx, uint64(info.ID), info.GroupIDs, in.Label)
		if errors.Is(err, ErrLabelNotFound) {
			l, err = labelNumbered(tx, info, in.Label)
		}
		if err != nil {
			return err
		}
		v, err := s.labelView(tx, l, info, auth.FromContext(ctx).UserID())
		out.Body = &v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) createLabel(ctx context.Context, in *struct {
	ProjectPath
	Body labelBody
}) (*labelOutput, error) {
	b := &in.Body
	if err := requireNameAndColor(b.Name, b.Color); err != nil {
		return nil, err
	}
	info, err := s.adminLabels(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(*b.Name)
	if err := checkLabelName(name); err != nil {
		return nil, err
	}
	if err := checkColor(*b.Color); err != nil {
		return nil, err
	}
	l := &Label{ProjectID: uint64(info.ID), Name: name, Color: *b.Color, Priority: b.Priority, CreatedAt: s.now()}
	if b.Description != nil {
		l.Description = *b.Description
	}
	out := &labelOutput{}
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
		v, err := s.labelView(tx, l, info, 0)
		out.Body = &v
		return err
	})
	return out, err
}

// LabelPath is a label named in the path (by id or name), as later
// GitLab versions and today's clients address it.
type LabelPath struct {
	ProjectPath
	Label string `path:"label_id"`
}

func (s *Service) updateLabelByPath(ctx context.Context, in *struct {
	LabelPath
	Body labelBody
}) (*labelOutput, error) {
	in.Body.Name = &in.Label
	return s.updateLabel(ctx, &struct {
		ProjectPath
		Body labelBody
	}{in.ProjectPath, in.Body})
}

func (s *Service) deleteLabelByPath(ctx context.Context, in *LabelPath) (*deleteOutput, error) {
	return s.deleteLabel(ctx, &struct {
		ProjectPath
		Name string `query:"name"`
		Body struct {
			Name *string `json:"name,omitempty"`
		}
	}{ProjectPath: in.ProjectPath, Name: in.Label})
}

// labelNumbered finds, by its id, a label the project sees (its own or a
// group's of info.GroupIDs).
func labelNumbered(tx *store.Tx, info projects.ProjectInfo, ref string) (*Label, error) {
	id, err := strconv.ParseUint(ref, 10, 64)
	if err != nil {
		return nil, ErrLabelNotFound
	}
	l, err := labels.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrLabelNotFound
	}
	if err != nil {
		return nil, err
	}
	if (l.GroupID == 0 && l.ProjectID == uint64(info.ID)) || (l.GroupID != 0 && slices.Contains(info.GroupIDs, int64(l.GroupID))) {
		return l, nil
	}
	return nil, ErrLabelNotFound
}

// labelNamed finds a project's label by name, or by id when no label has
// that name.
func labelNamed(tx *store.Tx, project int64, name string) (*Label, error) {
	l, err := labels.GetBy(tx, "name", i64(project)+"/"+name)
	if errors.Is(err, store.ErrNotFound) {
		if id, perr := strconv.ParseUint(name, 10, 64); perr == nil {
			if byID, err := labels.Get(tx, id); err == nil && byID.ProjectID == uint64(project) {
				return byID, nil
			}
		}
		return nil, ErrLabelNotFound
	}
	return l, err
}

func (s *Service) updateLabel(ctx context.Context, in *struct {
	ProjectPath
	Body labelBody
}) (*labelOutput, error) {
	b := &in.Body
	if b.Name == nil {
		return nil, api.Missing("name")
	}
	if b.NewName == nil && b.Color == nil && b.Description == nil && b.Priority == nil {
		return nil, api.AtLeastOne("new_name", "color", "description", "priority")
	}
	info, err := s.adminLabels(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var newName string
	if b.NewName != nil {
		newName = strings.TrimSpace(*b.NewName)
		if err := checkLabelName(newName); err != nil {
			return nil, err
		}
	}
	if b.Color != nil {
		if err := checkColor(*b.Color); err != nil {
			return nil, err
		}
	}
	out := &labelOutput{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := labelNamed(tx, info.ID, *b.Name)
		if err != nil {
			return err
		}
		if newName != "" && newName != l.Name {
			// A name one of the project's groups has is taken too, as on
			// create. (GitLab's model refuses it with a 400 naming the
			// group, and looks at the owning group only; Fennec answers
			// as its create does.)
			if _, err := seenLabel(tx, uint64(info.ID), info.GroupIDs, newName); !errors.Is(err, ErrLabelNotFound) {
				if err == nil {
					err = ErrLabelExists
				}
				return err
			}
			l.Name = newName
		}
		if b.Color != nil {
			l.Color = *b.Color
		}
		if b.Description != nil {
			l.Description = *b.Description
		}
		if b.Priority != nil {
			l.Priority = b.Priority
			if *b.Priority < 0 {
				l.Priority = nil
			}
		}
		if err := labels.Update(tx, l); err != nil {
			return err
		}
		v, err := s.labelView(tx, l, info, 0)
		out.Body = &v
		return err
	})
	return out, err
}

func (s *Service) deleteLabel(ctx context.Context, in *struct {
	ProjectPath
	Name string `query:"name"`
	Body struct {
		Name *string `json:"name,omitempty"`
	}
}) (*deleteOutput, error) {
	name := in.Name
	if in.Body.Name != nil {
		name = *in.Body.Name
	}
	if name == "" {
		return nil, api.Missing("name")
	}
	info, err := s.adminLabels(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := labelNamed(tx, info.ID, name)
		if err != nil {
			return err
		}
		return s.removeLabel(tx, l)
	})
	return &deleteOutput{}, err
}

// removeLabel deletes a label and takes it off its issues.
func (s *Service) removeLabel(tx *store.Tx, l *Label) error {
	ids, err := issues.IDsBy(tx, "label", u64(l.ID))
	if err != nil {
		return err
	}
	for _, id := range ids {
		i, err := issues.Get(tx, id)
		if err != nil {
			return err
		}
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

func removeID(list []uint64, id uint64) []uint64 {
	out := list[:0:0]
	for _, x := range list {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

func (s *Service) registerLabels(a *api.API) {
	tags := []string{"labels"}
	api.Register(a, api.Op{ID: "list-project-labels", Method: http.MethodGet, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "A project's labels"}, s.listLabels)
	api.Register(a, api.Op{ID: "create-project-label", Method: http.MethodPost, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "Create a label (Reporter+)", Access: api.SignedIn}, s.createLabel)
	api.Register(a, api.Op{ID: "update-project-label", Method: http.MethodPut, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "Edit a label by name (Reporter+)", Access: api.SignedIn}, s.updateLabel)
	api.Register(a, api.Op{ID: "delete-project-label", Method: http.MethodDelete, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "Delete a label by name (Reporter+)", Access: api.SignedIn}, s.deleteLabel)
	api.Register(a, api.Op{ID: "get-project-label", Method: http.MethodGet, Path: "/projects/{id}/labels/{label_id}", Tags: tags,
		Summary: "A label named (or numbered) in the path"}, s.getLabelByPath)
	api.Register(a, api.Op{ID: "update-project-label-by-path", Method: http.MethodPut, Path: "/projects/{id}/labels/{label_id}", Tags: tags,
		Summary: "Edit a label named (or numbered) in the path (Reporter+)", Access: api.SignedIn}, s.updateLabelByPath)
	api.Register(a, api.Op{ID: "delete-project-label-by-path", Method: http.MethodDelete, Path: "/projects/{id}/labels/{label_id}", Tags: tags,
		Summary: "Delete a label named (or numbered) in the path (Reporter+)", Access: api.SignedIn}, s.deleteLabelByPath)
}

// requireNameAndColor is the missing-parameter answer of a label create,
// project or group: both are required, and GitLab names every one missing.
func requireNameAndColor(name, color *string) error {
	var missing []string
	if name == nil {
		missing = append(missing, "name")
	}
	if color == nil {
		missing = append(missing, "color")
	}
	if len(missing) > 0 {
		return api.Missing(missing...)
	}
	return nil
}
