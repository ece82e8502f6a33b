package internal

import (
	"context"
	"errors"
	"net/http"
	"regexp"
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

// labelView shows a label with the counts of its issues that the caller
// (uid, on the project resolved as them) may see: a confidential issue
// counts only for those who may see it (canSeeConfidential).
func (s *Service) labelView(tx *store.Tx, l *Label, info projects.ProjectInfo, uid int64) (LabelView, error) {
	v := LabelView{ID: l.ID, Name: l.Name, Color: l.Color, Description: strPtr(l.Description), Priority: l.Priority,
		OpenIssuesCount: getLabelCount(tx, l.ID, countOpen), ClosedIssuesCount: getLabelCount(tx, l.ID, countClosed)}
	if info.Level >= projects.Reporter {
		return v, nil
	}
	confOpen, confClosed := getLabelCount(tx, l.ID, countConfidentialOpen), getLabelCount(tx, l.ID, countConfidentialClosed)
	if confOpen+confClosed == 0 {
		return v, nil
	}
	v.OpenIssuesCount -= confOpen
	v.ClosedIssuesCount -= confClosed
	if uid == 0 {
		return v, nil
	}
	// The confidential issues the caller wrote or is assigned to count
	// again: only this case reads the label's issues.
	ids, err := issues.IDsBy(tx, "label", u64(l.ID))
	if err != nil {
		return v, err
	}
	for _, id := range ids {
		i, err := issues.Get(tx, id)
		if err != nil {
			return v, err
		}
		if !i.Confidential || !canSeeConfidential(info, i, uid) {
			continue
		}
		if i.Open() {
			v.OpenIssuesCount++
		} else {
			v.ClosedIssuesCount++
		}
	}
	return v, nil
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

func (s *Service) listLabels(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
}) (*labelsOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadProject)
	if err != nil {
		return nil, err
	}
	out := &labelsOutput{Body: []LabelView{}}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := labels.IDsBy(tx, "project", i64(info.ID))
		if err != nil {
			return err
		}
		list := make([]*Label, 0, len(ids))
		for _, id := range ids {
			l, err := labels.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, l)
		}
		sort.Slice(list, func(a, b int) bool { return list[a].Name < list[b].Name })
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
// python-gitlab's labels.get uses it.)
func (s *Service) getLabelByPath(ctx context.Context, in *LabelPath) (*labelOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadProject)
	if err != nil {
		return nil, err
	}
	out := &labelOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		l, err := labelNamed(tx, info.ID, in.Label)
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
	switch {
	case b.Name == nil && b.Color == nil:
		return nil, api.Missing("name", "color")
	case b.Name == nil:
		return nil, api.Missing("name")
	case b.Color == nil:
		return nil, api.Missing("color")
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
		if _, err := labels.GetBy(tx, "name", u64(l.ProjectID)+"/"+name); err == nil {
			return ErrLabelExists
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
			if _, err := labels.GetBy(tx, "name", i64(info.ID)+"/"+newName); err == nil {
				return ErrLabelExists
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
