package internal

// The edit page of a merge request: title, description, target branch,
// assignee (by username), labels, milestone (by title) and the remove
// source branch choice, saved with Service.Update as PUT
// /merge_requests/:iid, so its system notes, todos and events are the
// API's. A refused form is shown again with its input (422).

import (
	"errors"
	"net/http"
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
	Assignee, Labels, Milestone      string
	RemoveSource                     bool
}

type editData struct {
	Form               editInput
	Action, CancelHref string
	Problem            string
}

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
		f = &editInput{Title: m.Title, Description: m.Description, TargetBranch: m.TargetBranch, Milestone: rows[0].Milestone,
			RemoveSource: m.ForceRemoveSourceBranch}
		for _, l := range rows[0].Labels {
			f.Labels += l.Name + ", "
		}
		f.Labels = strings.TrimSuffix(f.Labels, ", ")
		if m.AssigneeID != 0 {
			f.Assignee = pg.s.renderer(ctx).user(m.AssigneeID).Username
		}
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	self := mrURL(full, iid, "")
	pg.t.Render(w, r, "edit", web.Page{Title: "Edit !" + itoa(int64(iid)) + " · " + info.NameWithNamespace, Project: header(info),
		Tab: "merge_requests", Status: status, Crumbs: append(pg.crumbs(info, iid), web.Crumb{Label: "Edit"}),
		Data: editData{Form: *f, Action: pg.site.URL(self + "/edit"), CancelHref: pg.site.URL(self), Problem: problem}})
}

// update saves the edit form.
func (pg *mrPages) update(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	in := editInput{Title: r.PostFormValue("title"), Description: r.PostFormValue("description"),
		TargetBranch: strings.TrimSpace(r.PostFormValue("target_branch")), Assignee: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("assignee")), "@")),
		Labels: r.PostFormValue("labels"), Milestone: strings.TrimSpace(r.PostFormValue("milestone")), RemoveSource: r.PostFormValue("remove_source_branch") != ""}
	info, err := pg.s.writeProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	labels := splitLabels(in.Labels)
	if labels == nil {
		labels = []string{}
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
	if in.Milestone != "" {
		if pg.s.Milestones == nil {
			pg.editForm(w, r, iid, &in, "This server keeps no milestones.")
			return
		}
		ms, err := pg.s.Milestones.ByTitle(ctx, info.ID, in.Milestone)
		if err != nil {
			pg.editForm(w, r, iid, &in, "The project has no milestone "+in.Milestone+".")
			return
		}
		milestone = ms.ID
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
