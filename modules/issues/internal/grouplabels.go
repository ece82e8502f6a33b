package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Group labels follow later GitLab's Group Labels API (11.8 on):
// /groups/:id/labels, a label named (or numbered) in the path, and the
// older PUT and DELETE with the name in the parameters (python-gitlab's
// save and delete use them). They live in the labels table (GroupID set,
// ProjectID 0), so one id names a project or a group label and an issue's
// labels may be either.
//
// Who may do what is GitLab's: every group label route wants a signed-in
// caller (the API's authenticate!); whoever sees the group lists and reads
// its labels (one who does not gets 404 Group Not Found); creating,
// editing and deleting take Reporter or more in the group (GitLab's
// GroupPolicy grants admin_label to reporters, as the project's
// admin_label), inherited from the groups above it, or an administrator.
//
// A project sees the labels of its group and of the groups above it
// (ProjectInfo.GroupIDs): they are in its label list (is_project_label
// false), issues and merge requests take them by name, and the filters
// by label find them. A name the project has itself wins over a group's,
// and a nearer group's over a farther one's.

// GroupLabelView is a group label (GitLab's GroupLabel entity): the counts
// only when asked for (with_counts), as GitLab shows them; Fennec keeps no
// subscriptions to labels, so subscribed is false.
type GroupLabelView struct {
	ID                     uint64  `json:"id"`
	Name                   string  `json:"name"`
	Color                  string  `json:"color"`
	Description            *string `json:"description"`
	OpenIssuesCount        *int    `json:"open_issues_count,omitempty"`
	ClosedIssuesCount      *int    `json:"closed_issues_count,omitempty"`
	OpenMergeRequestsCount *int    `json:"open_merge_requests_count,omitempty"`
	Subscribed             bool    `json:"subscribed"`
}

// GroupLabelPath is a group label's :id and :label_id (its name or id).
type GroupLabelPath struct {
	GroupRef
	Label string `path:"label_id" doc:"The label's name (URL-encoded) or id"`
}

type groupLabelsOutput struct {
	api.PageHeaders
	Body []GroupLabelView
}

type groupLabelOutput struct{ Body *GroupLabelView }

type groupLabelCreate struct {
	Name        *string `json:"name,omitempty" required:"true"`
	Color       *string `json:"color,omitempty" required:"true" doc:"#RGB or #RRGGBB"`
	Description *string `json:"description,omitempty"`
	// Priority is accepted and ignored: GitLab keeps priorities per
	// project, and its group API drops the parameter (python-gitlab may
	// send it).
	Priority *int `json:"priority,omitempty" doc:"Accepted and ignored (a group label has no priority)"`
}

type groupLabelUpdate struct {
	NewName     *string `json:"new_name,omitempty"`
	Color       *string `json:"color,omitempty"`
	Description *string `json:"description,omitempty"`
}

func (b *groupLabelUpdate) empty() bool {
	return b.NewName == nil && b.Color == nil && b.Description == nil
}

func (s *Service) registerGroupLabels(a *api.API) {
	tags := []string{"labels"}
	api.Register(a, api.Op{ID: "list-group-labels", Method: http.MethodGet, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "A group's labels (and its ancestors')", Access: api.SignedIn}, s.listGroupLabels)
	api.Register(a, api.Op{ID: "get-group-label", Method: http.MethodGet, Path: "/groups/{id}/labels/{label_id}", Tags: tags,
		Summary: "A group label named (or numbered) in the path", Access: api.SignedIn}, s.getGroupLabel)
	api.Register(a, api.Op{ID: "create-group-label", Method: http.MethodPost, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "Create a group label (group Reporter+)", Access: api.SignedIn}, s.createGroupLabel)
	api.Register(a, api.Op{ID: "update-group-label", Method: http.MethodPut, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "Edit a group label by name (group Reporter+)", Access: api.SignedIn}, s.updateGroupLabelByName)
	api.Register(a, api.Op{ID: "update-group-label-by-path", Method: http.MethodPut, Path: "/groups/{id}/labels/{label_id}", Tags: tags,
		Summary: "Edit a group label named (or numbered) in the path (group Reporter+)", Access: api.SignedIn}, s.updateGroupLabelByPath)
	api.Register(a, api.Op{ID: "delete-group-label", Method: http.MethodDelete, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "Delete a group label by name (group Reporter+)", Access: api.SignedIn}, s.deleteGroupLabelByName)
	api.Register(a, api.Op{ID: "delete-group-label-by-path", Method: http.MethodDelete, Path: "/groups/{id}/labels/{label_id}", Tags: tags,
		Summary: "Delete a group label named (or numbered) in the path (group Reporter+)", Access: api.SignedIn}, s.deleteGroupLabelByPath)
}

// adminGroupLabels resolves :id for changing its labels.
func (s *Service) adminGroupLabels(ctx context.Context, ref string) (projects.GroupInfo, error) {
	g, err := s.teams.ResolveGroup(ctx, ref)
	if err != nil {
		return g, err
	}
	if g.Level < projects.Reporter {
		return g, projects.ErrForbidden
	}
	return g, nil
}

// groupLabelIn finds a label of the groups (nearest first) by name, or by
// id when none has that name (the project labels' order).
func groupLabelIn(tx *store.Tx, groups []int64, ref string) (*Label, error) {
	for _, g := range groups {
		l, err := labels.GetBy(tx, "name", groupLabelKey(uint64(g))+"/"+ref)
		if !errors.Is(err, store.ErrNotFound) {
			return l, err
		}
	}
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
	for _, g := range groups {
		if l.GroupID == uint64(g) {
			return l, nil
		}
	}
	return nil, ErrLabelNotFound
}

// withAncestors is the group and the groups above it, nearest first.
func withAncestors(g projects.GroupInfo) []int64 {
	return append([]int64{g.ID}, g.AncestorIDs...)
}

func groupLabelView(l *Label) *GroupLabelView {
	return &GroupLabelView{ID: l.ID, Name: l.Name, Color: l.Color, Description: strPtr(l.Description)}
}

// groupCounter counts group labels' issues in the projects the caller may
// read issues of, as they see them; it remembers each project's answer.
type groupCounter struct {
	s     *Service
	uid   int64
	infos map[uint64]*projects.ProjectInfo
}

func (c *groupCounter) counts(tx *store.Tx, l *Label, v *GroupLabelView) error {
	open, closed := 0, 0
	for _, pid := range groupLabelProjects(tx, l.ID) {
		info, ok := c.infos[pid]
		if !ok {
			pi, err := c.s.access.RequireID(tx.Context(), int64(pid), projects.ReadIssues)
			switch {
			case err == nil:
				info = &pi
			case !errors.Is(err, projects.ErrNotFound) && !errors.Is(err, projects.ErrForbidden):
				return err
			}
			c.infos[pid] = info
		}
		if info == nil {
			continue
		}
		o, cl, err := labelCountsIn(tx, l, *info, c.uid)
		if err != nil {
			return err
		}
		open, closed = open+o, closed+cl
	}
	// Merge requests keep no label counts (the project's view shows 0
	// too).
	mrs := 0
	v.OpenIssuesCount, v.ClosedIssuesCount, v.OpenMergeRequestsCount = &open, &closed, &mrs
	return nil
}

func (s *Service) listGroupLabels(ctx context.Context, in *struct {
	GroupRef
	api.PageParams
	WithCounts            bool   `query:"with_counts" doc:"Show the counts of issues and merge requests"`
	IncludeAncestorGroups string `query:"include_ancestor_groups" doc:"true (default): the labels of the groups above it too"`
	Search                string `query:"search" doc:"Name or description contains this"`
}) (*groupLabelsOutput, error) {
	ancestors, err := parseBoolParam("include_ancestor_groups", in.IncludeAncestorGroups, true)
	if err != nil {
		return nil, err
	}
	g, err := s.teams.ResolveGroup(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	groups := []int64{g.ID}
	if ancestors {
		groups = withAncestors(g)
	}
	search := strings.ToLower(in.Search)
	out := &groupLabelsOutput{Body: []GroupLabelView{}}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var list []*Label
		for _, gid := range groups {
			ids, err := labels.IDsBy(tx, "group", i64(gid))
			if err != nil {
				return err
			}
			for _, id := range ids {
				l, err := labels.Get(tx, id)
				if err != nil {
					return err
				}
				if labelMatches(l, search) {
					list = append(list, l)
				}
			}
		}
		sortLabels(list)
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		counter := &groupCounter{s: s, uid: auth.FromContext(ctx).UserID(), infos: map[uint64]*projects.ProjectInfo{}}
		for _, l := range api.Window(list, in.PageParams) {
			v := groupLabelView(l)
			if in.WithCounts {
				if err := counter.counts(tx, l, v); err != nil {
					return err
				}
			}
			out.Body = append(out.Body, *v)
		}
		return nil
	})
	return out, err
}

// getGroupLabel finds the label among the group's and its ancestors'
// (GitLab's include_ancestor_groups, true by default here too).
func (s *Service) getGroupLabel(ctx context.Context, in *GroupLabelPath) (*groupLabelOutput, error) {
	g, err := s.teams.ResolveGroup(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := &groupLabelOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		l, err := groupLabelIn(tx, withAncestors(g), in.Label)
		if err != nil {
			return err
		}
		out.Body = groupLabelView(l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkLabelFields validates what a create or an edit gives (name already
// trimmed; nil: not given).
func checkLabelFields(name, color, description *string) error {
	if name != nil {
		if err := checkLabelName(*name); err != nil {
			return err
		}
	}
	if color != nil {
		if err := checkColor(*color); err != nil {
			return err
		}
	}
	if description != nil {
		if err := target.CheckDescription(*description); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) createGroupLabel(ctx context.Context, in *struct {
	GroupRef
	Body groupLabelCreate
}) (*groupLabelOutput, error) {
	b := &in.Body
	if err := requireNameAndColor(b.Name, b.Color); err != nil {
		return nil, err
	}
	g, err := s.adminGroupLabels(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(*b.Name)
	if err := checkLabelFields(&name, b.Color, b.Description); err != nil {
		return nil, err
	}
	l := &Label{GroupID: uint64(g.ID), Name: name, Color: *b.Color, CreatedAt: s.now()}
	if b.Description != nil {
		l.Description = *b.Description
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		// GitLab refuses a name the group or a group above it has (409):
		// create_label looks among the labels available to the group,
		// ancestors included. Projects and subgroups below may have the
		// name already; their own label then wins in them.
		if _, err := groupLabelIn(tx, withAncestors(g), name); !errors.Is(err, ErrLabelNotFound) {
			if err == nil {
				err = ErrLabelExists
			}
			return err
		}
		return labels.Insert(tx, l)
	})
	if err != nil {
		return nil, err
	}
	return &groupLabelOutput{Body: groupLabelView(l)}, nil
}

// updateGroupLabelByName is the older PUT /groups/:id/labels, the label
// named in the parameters (python-gitlab's GroupLabel.save sends name and
// the changed fields there).
func (s *Service) updateGroupLabelByName(ctx context.Context, in *struct {
	GroupRef
	Body struct {
		Name        *string `json:"name,omitempty" required:"true" doc:"The label's name (or id)"`
		NewName     *string `json:"new_name,omitempty"`
		Color       *string `json:"color,omitempty"`
		Description *string `json:"description,omitempty"`
	}
}) (*groupLabelOutput, error) {
	b := &in.Body
	if b.Name == nil {
		return nil, api.Missing("name")
	}
	return s.updateGroupLabel(ctx, in.ID, *b.Name, &groupLabelUpdate{NewName: b.NewName, Color: b.Color, Description: b.Description})
}

func (s *Service) updateGroupLabelByPath(ctx context.Context, in *struct {
	GroupLabelPath
	Body groupLabelUpdate
}) (*groupLabelOutput, error) {
	return s.updateGroupLabel(ctx, in.ID, in.Label, &in.Body)
}

// updateGroupLabel edits one of the group's own labels (not an
// ancestor's: GitLab finds it without include_ancestor_groups). A rename
// carries the issues and merge requests that have the label, as a
// project label's does: they hold its id.
func (s *Service) updateGroupLabel(ctx context.Context, ref, label string, b *groupLabelUpdate) (*groupLabelOutput, error) {
	if b.empty() {
		return nil, api.AtLeastOne("new_name", "color", "description")
	}
	var newName *string
	if b.NewName != nil {
		n := strings.TrimSpace(*b.NewName)
		newName = &n
	}
	if err := checkLabelFields(newName, b.Color, b.Description); err != nil {
		return nil, err
	}
	g, err := s.adminGroupLabels(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := &groupLabelOutput{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := groupLabelIn(tx, []int64{g.ID}, label)
		if err != nil {
			return err
		}
		if newName != nil && *newName != l.Name {
			if _, err := groupLabelIn(tx, withAncestors(g), *newName); !errors.Is(err, ErrLabelNotFound) {
				if err == nil {
					err = ErrLabelExists
				}
				return err
			}
			l.Name = *newName
		}
		if b.Color != nil {
			l.Color = *b.Color
		}
		if b.Description != nil {
			l.Description = *b.Description
		}
		if err := labels.Update(tx, l); err != nil {
			return err
		}
		out.Body = groupLabelView(l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deleteGroupLabelByName is the older DELETE /groups/:id/labels, the
// label named in the query or the body.
func (s *Service) deleteGroupLabelByName(ctx context.Context, in *struct {
	GroupRef
	Name string `query:"name" doc:"The label's name (or id)"`
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
	return s.deleteGroupLabel(ctx, in.ID, name)
}

func (s *Service) deleteGroupLabelByPath(ctx context.Context, in *GroupLabelPath) (*deleteOutput, error) {
	return s.deleteGroupLabel(ctx, in.ID, in.Label)
}

// deleteGroupLabel deletes one of the group's own labels and takes it off
// the issues of every project that has it (removeLabel, as for a project
// label).
func (s *Service) deleteGroupLabel(ctx context.Context, ref, label string) (*deleteOutput, error) {
	g, err := s.adminGroupLabels(ctx, ref)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := groupLabelIn(tx, []int64{g.ID}, label)
		if err != nil {
			return err
		}
		return s.removeLabel(tx, l)
	})
	if err != nil {
		return nil, err
	}
	return &deleteOutput{}, nil
}

// GroupSubscribers drop what the module keeps for a deleted group.
func GroupSubscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Only(events.SubscribeInTx("issues.group_deleted", s.onGroupDeleted), func(ev projects.GroupEvent) bool {
			return ev.Action == projects.GroupDeleted
		}),
	}
}

// onGroupDeleted deletes the group's labels and milestones in the
// transaction that acknowledges the event: its labels come off the issues
// that carry them (removeLabel), its milestones off theirs, and its
// milestones' iid sequence goes. The group's projects are deleted too,
// through their own events; this takes nothing of theirs. A repeat finds
// nothing left.
func (s *Service) onGroupDeleted(ctx context.Context, ev projects.GroupEvent) error {
	gid := uint64(ev.GroupID)
	return s.db.Update(ctx, func(tx *store.Tx) error {
		ids, err := labels.IDsBy(tx, "group", u64(gid))
		if err != nil {
			return err
		}
		for _, id := range ids {
			l, err := labels.Get(tx, id)
			if err != nil {
				return err
			}
			if err := s.removeLabel(tx, l); err != nil {
				return err
			}
		}
		if ids, err = milestones.IDsBy(tx, "group", u64(gid)); err != nil {
			return err
		}
		for _, id := range ids {
			with, err := issues.IDsBy(tx, "milestone", u64(id))
			if err != nil {
				return err
			}
			for _, iid := range with {
				i, err := issues.Get(tx, iid)
				if err != nil {
					return err
				}
				before := *i
				i.MilestoneID = 0
				if err := updateIssue(tx, before, i); err != nil {
					return err
				}
			}
			if err := milestones.Delete(tx, id); err != nil {
				return err
			}
		}
		return tx.Bucket(sequences).Delete(countKey(gid, groupSeq))
	})
}
