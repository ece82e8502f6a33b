package internal

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
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
		l, err := labels.GetBy(tx, "name", groupLabelKey(g)+"/"+ref)
		if !errors.Is(err, store.ErrNotFound) {
			return l, err
		}
	}
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
	for _, g := range groups {
		if l.GroupID == g {
			return l, nil
		}
	}
	return nil, ErrLabelNotFound
}

// withAncestors is the group and the groups above it, nearest first.
func withAncestors(g projects.GroupInfo) []int64 {
	return append([]int64{g.ID}, g.AncestorIDs...)
}

// groupCounter counts group labels' issues in the projects the caller may
// read issues of, as they see them; it remembers each project's answer.
type groupCounter struct {
	s     *Service
	uid   int64
	infos map[int64]*projects.ProjectInfo
}

func (c *groupCounter) counts(tx *store.Tx, l *Label, r *issue.Label) error {
	open, closed := 0, 0
	for _, pid := range groupLabelProjects(tx, l.ID) {
		info, ok := c.infos[pid]
		if !ok {
			pi, err := c.s.access.RequireID(tx.Context(), pid, projects.ReadIssues)
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
	r.Counted, r.OpenIssuesCount, r.ClosedIssuesCount = true, open, closed
	return nil
}

// GroupLabels implements issue.Service.
func (s *Service) GroupLabels(ctx context.Context, group string, q issue.LabelQuery) ([]issue.Label, int, error) {
	g, err := s.teams.ResolveGroup(ctx, group)
	if err != nil {
		return nil, 0, err
	}
	groups := []int64{g.ID}
	if q.Ancestors {
		groups = withAncestors(g)
	}
	search := strings.ToLower(q.Search)
	out := []issue.Label{}
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var list []*Label
		for _, gid := range groups {
			own, err := labels.AllBy(tx, "group", store.IDString(gid))
			if err != nil {
				return err
			}
			for _, l := range own {
				if labelMatches(l, search) {
					list = append(list, l)
				}
			}
		}
		sortLabels(list)
		total = len(list)
		counter := &groupCounter{s: s, uid: auth.FromContext(ctx).UserID(), infos: map[int64]*projects.ProjectInfo{}}
		for _, l := range target.Window(list, target.Page{Offset: q.Offset, Limit: q.Limit}) {
			r := labelRecord(l)
			if q.WithCounts {
				if err := counter.counts(tx, l, &r); err != nil {
					return err
				}
			}
			out = append(out, r)
		}
		return nil
	})
	return out, total, err
}

// GetGroupLabel implements issue.Service: the label among the group's and
// its ancestors' (GitLab's include_ancestor_groups, true by default here
// too).
func (s *Service) GetGroupLabel(ctx context.Context, group, label string) (issue.Label, error) {
	g, err := s.teams.ResolveGroup(ctx, group)
	if err != nil {
		return issue.Label{}, err
	}
	var out issue.Label
	err = s.db.View(ctx, func(tx *store.Tx) error {
		l, err := groupLabelIn(tx, withAncestors(g), label)
		if err == nil {
			out = labelRecord(l)
		}
		return err
	})
	return out, err
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

// CreateGroupLabel implements issue.Service (a priority is ignored: GitLab
// keeps priorities per project).
func (s *Service) CreateGroupLabel(ctx context.Context, group string, in issue.LabelFields) (issue.Label, error) {
	if err := requireNameAndColor(in.Name, in.Color); err != nil {
		return issue.Label{}, err
	}
	g, err := s.adminGroupLabels(ctx, group)
	if err != nil {
		return issue.Label{}, err
	}
	name := strings.TrimSpace(*in.Name)
	if err := checkLabelFields(&name, in.Color, in.Description); err != nil {
		return issue.Label{}, err
	}
	l := &Label{GroupID: g.ID, Name: name, Color: *in.Color, CreatedAt: s.now()}
	if in.Description != nil {
		l.Description = *in.Description
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
		return issue.Label{}, err
	}
	return labelRecord(l), nil
}

// UpdateGroupLabel implements issue.Service: it edits one of the group's
// own labels (not an ancestor's: GitLab finds it without
// include_ancestor_groups); in.Name is the new name. A rename carries the
// issues and merge requests that have the label, as a project label's
// does: they hold its id.
func (s *Service) UpdateGroupLabel(ctx context.Context, group, label string, in issue.LabelFields) (issue.Label, error) {
	if in.Name == nil && in.Color == nil && in.Description == nil {
		return issue.Label{}, nothingGiven("new_name", "color", "description")
	}
	var newName *string
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		newName = &n
	}
	if err := checkLabelFields(newName, in.Color, in.Description); err != nil {
		return issue.Label{}, err
	}
	g, err := s.adminGroupLabels(ctx, group)
	if err != nil {
		return issue.Label{}, err
	}
	var out issue.Label
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
		if in.Color != nil {
			l.Color = *in.Color
		}
		if in.Description != nil {
			l.Description = *in.Description
		}
		if err := labels.Update(tx, l); err != nil {
			return err
		}
		out = labelRecord(l)
		return nil
	})
	return out, err
}

// DeleteGroupLabel implements issue.Service: it deletes one of the
// group's own labels and takes it off the issues of every project that
// has it (removeLabel, as for a project label).
func (s *Service) DeleteGroupLabel(ctx context.Context, group, label string) error {
	g, err := s.adminGroupLabels(ctx, group)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := groupLabelIn(tx, []int64{g.ID}, label)
		if err != nil {
			return err
		}
		return s.removeLabel(tx, l)
	})
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
	gid := ev.GroupID
	return s.db.Update(ctx, func(tx *store.Tx) error {
		ids, err := labels.IDsBy(tx, "group", store.IDString(gid))
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
		if ids, err = milestones.IDsBy(tx, "group", store.IDString(gid)); err != nil {
			return err
		}
		for _, id := range ids {
			with, err := issues.IDsBy(tx, "milestone", store.IDString(id))
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
		return sequences.Delete(tx, countKey(gid, groupSeq))
	})
}
