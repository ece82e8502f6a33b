package internal

// The edit page of a merge request: title, description, target branch,
// assignee (chosen from the team, posted by username), labels (a box per
// label, and a text field), milestone (chosen among the open ones) and
// the remove source branch choice, saved with Service.Update as PUT
// /merge_requests/:iid, so its system notes, todos and events are the
// API's. A refused form is shown again with its input (422).

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// editInput is the edit form's fields.
type editInput struct {
	Title, Description, TargetBranch string
	Assignee, Milestone              string // a username, a milestone id ("" or "0": none)
	Labels                           []string
	RemoveSource                     bool
}

// choice is an option of a select.
type choice struct {
	Value, Label string
	Selected     bool
}

type editData struct {
	Form                  editInput
	Assignees, Milestones []choice
	Labels                web.LabelPicker
	Action, CancelHref    string
	Problem               string
}

// The pickers' bounds: a team or a label set past them is typed instead
// (the assignee by username, labels in the text field).
const (
	maxAssigneeChoices  = 500
	maxMilestoneChoices = 200
	maxLabelChoices     = 200
)

// editForm shows the form with the merge request's fields, or f (a
// refused form's input) and problem.
func (pg *mrPages) editForm(w http.ResponseWriter, r *http.Request, iid mergerequest.IID, f *editInput, problem string) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	info, err := pg.s.writeProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	m, err := pg.s.Get(ctx, mergerequest.Ref{Project: full, IID: iid})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	if f == nil {
		rows, err := pg.rows(ctx, info, []mergerequest.MergeRequest{m})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		f = &editInput{Title: m.Title, Description: m.Description, TargetBranch: m.TargetBranch,
			Milestone: itoa(m.MilestoneID), RemoveSource: m.ForceRemoveSourceBranch}
		for _, l := range rows[0].Labels {
			f.Labels = append(f.Labels, l.Name)
		}
		if m.AssigneeID != 0 {
			f.Assignee = pg.s.renderer(ctx).user(m.AssigneeID).Username
		}
	}
	d := editData{Form: *f, Action: pg.site.URL(mrURL(full, iid, "/edit")), CancelHref: pg.site.URL(mrURL(full, iid, "")), Problem: problem}
	if d.Assignees, err = pg.assigneeChoices(ctx, info, f.Assignee); err == nil {
		if d.Milestones, err = pg.milestoneChoices(ctx, info, f.Milestone); err == nil {
			d.Labels, err = pg.labelPicker(ctx, info, f.Labels)
		}
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "edit", web.Page{Title: "Edit !" + itoa(int64(iid)) + " · " + info.NameWithNamespace, Project: header(info),
		Tab: "merge_requests", Status: status, Crumbs: append(pg.crumbs(info, iid), web.Crumb{Label: "Edit"}), Data: d})
}

// assigneeChoices are the project's team (members, its groups' and the
// namespace's owner), "Unassigned" first, by username; the current
// assignee stays a choice when no longer in the team, so saving the form
// unchanged changes nothing.
func (pg *mrPages) assigneeChoices(ctx context.Context, info projects.ProjectInfo, current string) ([]choice, error) {
	out := []choice{{Value: "", Label: "Unassigned", Selected: current == ""}}
	var ids []int64
	if pg.s.Teams != nil {
		var err error
		if _, ids, err = pg.s.Teams.ProjectTeam(ctx, info.ID); err != nil {
			return nil, err
		}
	}
	users, found := pg.s.renderer(ctx), current == ""
	for n, id := range ids {
		if n == maxAssigneeChoices {
			break
		}
		u := users.user(id)
		out = append(out, choice{Value: u.Username, Label: u.Name + " (@" + u.Username + ")", Selected: u.Username == current})
		found = found || u.Username == current
	}
	if !found {
		out = append(out, choice{Value: current, Label: "@" + current, Selected: true})
	}
	return out, nil
}

// milestoneChoices are the open milestones a merge request of the project
// may take (its own, then its groups'), "None" first; the current one
// stays a choice when closed.
func (pg *mrPages) milestoneChoices(ctx context.Context, info projects.ProjectInfo, current string) ([]choice, error) {
	none := current == "" || current == "0"
	out := []choice{{Value: "0", Label: "None", Selected: none}}
	if pg.s.Milestones == nil {
		return out, nil
	}
	list, err := pg.s.Milestones.Open(ctx, info.ID, maxMilestoneChoices)
	if err != nil {
		return nil, err
	}
	found := none
	for _, m := range list {
		id := itoa(m.ID)
		out = append(out, choice{Value: id, Label: m.Title, Selected: id == current})
		found = found || id == current
	}
	if !found {
		id, err := strconv.ParseInt(current, 10, 64)
		if err != nil {
			return out, nil
		}
		if m, err := pg.s.Milestones.Assignable(ctx, info.ID, id); err == nil {
			out = append(out, choice{Value: current, Label: m.Title + " (closed)", Selected: true})
		}
	}
	return out, nil
}

// labelPicker is the form's labels: a box for each label the project sees
// (the first maxLabelChoices), checked for those in current.
func (pg *mrPages) labelPicker(ctx context.Context, info projects.ProjectInfo, current []string) (web.LabelPicker, error) {
	var choices []web.LabelChoice
	if pg.s.Labels != nil {
		available, err := pg.s.Labels.Available(ctx, info.ID, maxLabelChoices)
		if err != nil {
			return web.LabelPicker{}, err
		}
		for _, l := range available {
			choices = append(choices, web.LabelChoice{Name: l.Name, Color: l.Color})
		}
	}
	return web.NewLabelPicker("mr-labels", current, choices...), nil
}

// update saves the edit form.
func (pg *mrPages) update(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	labels, _ := web.PostedLabels(r)
	in := editInput{Title: r.PostFormValue("title"), Description: r.PostFormValue("description"),
		TargetBranch: strings.TrimSpace(r.PostFormValue("target_branch")), Assignee: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("assignee")), "@")),
		Labels: labels, Milestone: strings.TrimSpace(r.PostFormValue("milestone_id")), RemoveSource: r.PostFormValue("remove_source_branch") != ""}
	info, err := pg.s.writeProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	f := mergerequest.Fields{Title: &in.Title, Description: &in.Description, TargetBranch: &in.TargetBranch, Labels: &labels,
		RemoveSourceBranch: &in.RemoveSource}
	var assignee, milestone int64
	if in.Assignee != "" {
		u, err := pg.s.Users.UserByUsername(ctx, in.Assignee)
		if err != nil {
			pg.editForm(w, r, iid, &in, "No user is called "+in.Assignee+".")
			return
		}
		assignee = u.ID
	}
	f.AssigneeID = &assignee
	if in.Milestone != "" && in.Milestone != "0" {
		id, err := strconv.ParseInt(in.Milestone, 10, 64)
		if err != nil || id <= 0 || pg.s.Milestones == nil {
			pg.editForm(w, r, iid, &in, "The milestone is not one of the project's.")
			return
		}
		if _, err := pg.s.Milestones.Assignable(ctx, info.ID, id); err != nil {
			pg.editForm(w, r, iid, &in, "The milestone is not one of the project's.")
			return
		}
		milestone = id
	}
	f.MilestoneID = &milestone
	_, err = pg.s.Update(ctx, mergerequest.Ref{Project: full, IID: iid}, f, "")
	var invalid *mergerequest.InvalidError
	var text *target.InvalidError
	var missing *mergerequest.BranchNotFoundError
	switch {
	case err == nil:
		pg.site.Redirect(w, r, mrURL(full, iid, ""))
	case errors.As(err, &invalid):
		pg.editForm(w, r, iid, &in, "Not saved: "+invalid.Field+" "+invalid.Text+".")
	case errors.As(err, &text):
		pg.editForm(w, r, iid, &in, "Not saved: "+text.Error()+".")
	case errors.As(err, &missing):
		pg.editForm(w, r, iid, &in, "Not saved: "+missing.Error()+".")
	case errors.Is(err, mergerequest.ErrSameBranch):
		pg.editForm(w, r, iid, &in, "Not saved: the target is the source branch.")
	case errors.Is(err, mergerequest.ErrNotChangeable):
		pg.editForm(w, r, iid, &in, "Not saved: a merged merge request keeps its branches.")
	case errors.Is(err, projects.ErrForbidden):
		pg.site.Error(w, r, http.StatusForbidden)
	default:
		pg.fail(w, r, err)
	}
}
