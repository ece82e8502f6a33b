package internal

// The labels and milestones pages of a project (issue 29): lists, and
// the forms that create, edit, delete labels and create, edit, close and
// reopen milestones, through the same service calls as the API (so
// Reporters manage labels, Masters milestones, as there).

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// registerLabelPages adds the labels' and the milestones' pages.
func (pg *issuePages) registerLabelPages(site *web.Site) {
	site.Project("GET labels", pg.getLabels)
	site.Project("POST labels", pg.postLabels)
	site.Project("GET milestones", pg.getMilestones)
	site.Project("POST milestones", pg.postMilestones)
}

type labelRow struct {
	labelChip
	ID                   int64
	Description          string
	Open, Closed         int
	EditHref, DeleteHref string
	Group                bool
}

// Chips is the row's label as the "chips" partial takes it.
func (r labelRow) Chips() []labelChip { return []labelChip{r.labelChip} }

type labelsData struct {
	Rows              []labelRow
	NewHref           string
	Form              labelForm
	Action, Problem   string
	Editing           bool
	CancelHref, Title string
}

type labelForm struct {
	Name, Color, Description string
}

// getLabels serves "/-/labels", "/-/labels/new" and "/-/labels/<id>/edit".
func (pg *issuePages) getLabels(w http.ResponseWriter, r *http.Request) {
	switch rest := r.PathValue("rest"); {
	case rest == "":
		pg.labels(w, r)
	case rest == "new":
		pg.labelForm(w, r, "", labelForm{Color: "#428BCA"}, "")
	case strings.HasSuffix(rest, "/edit"):
		id := strings.TrimSuffix(rest, "/edit")
		if _, ok := parseIID(id); !ok {
			pg.site.NotFound(w, r)
			return
		}
		pg.labelForm(w, r, id, labelForm{}, "")
	default:
		pg.site.NotFound(w, r)
	}
}

// labels lists the labels the project sees (its own and its groups'),
// each with its issue counts linking to the filtered issue list.
func (pg *issuePages) labels(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	list, _, err := pg.s.Labels(ctx, full, issue.LabelQuery{Ancestors: true, Limit: 1000})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	manage := auth.FromContext(ctx).User != nil && mayAdmin(info) && !info.Archived
	d := labelsData{}
	if manage {
		d.NewHref = pg.site.URL(labelsURL(full, "/new"))
	}
	for _, l := range list {
		row := labelRow{labelChip: pg.chip(full, l), ID: int64(l.ID), Description: l.Description, Open: l.OpenIssuesCount,
			Closed: l.ClosedIssuesCount, Group: l.GroupID != 0}
		if manage && !row.Group {
			id := strconv.FormatInt(int64(l.ID), 10)
			row.EditHref, row.DeleteHref = pg.site.URL(labelsURL(full, "/"+id+"/edit")), pg.site.URL(labelsURL(full, "/"+id+"/delete"))
		}
		d.Rows = append(d.Rows, row)
	}
	pg.t.Render(w, r, "labels", web.Page{Title: "Labels · " + info.NameWithNamespace, Project: header(info), Tab: "issues",
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Labels"}}, Data: d})
}

func labelsURL(full, suffix string) string { return "/" + web.EscapePath(full) + "/-/labels" + suffix }

func milestonesURL(full, suffix string) string {
	return "/" + web.EscapePath(full) + "/-/milestones" + suffix
}

// chip is a label of the project as a chip linking to its issues.
func (pg *issuePages) chip(full string, l issue.Label) labelChip {
	c := labelChip{Name: l.Name, Color: "#888888", Href: pg.site.URL(issuesURL(full, "") + "?" + url.Values{"label_name": {l.Name}}.Encode())}
	if colorPattern.MatchString(l.Color) {
		c.Color = l.Color
	}
	return c
}

// labelForm is the new label form (id "") or a label's edit form.
func (pg *issuePages) labelForm(w http.ResponseWriter, r *http.Request, id string, f labelForm, problem string) {
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
	if !mayAdmin(info) {
		pg.site.Error(w, r, http.StatusForbidden)
		return
	}
	d := labelsData{Form: f, Problem: problem, Editing: id != "", Action: pg.site.URL(labelsURL(full, "")), CancelHref: pg.site.URL(labelsURL(full, "")),
		Title: "New label"}
	if id != "" {
		l, err := pg.s.GetLabel(ctx, full, id)
		if errors.Is(err, issue.ErrLabelNotFound) || (err == nil && l.ProjectID != info.ID) {
			pg.site.NotFound(w, r)
			return
		}
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		if problem == "" {
			d.Form = labelForm{Name: l.Name, Color: l.Color, Description: l.Description}
		}
		d.Action, d.Title = pg.site.URL(labelsURL(full, "/"+id)), "Edit label"
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "label_form", web.Page{Title: d.Title + " · " + info.NameWithNamespace, Project: header(info), Tab: "issues", Status: status,
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Labels", Href: labelsURL(full, "")}, {Label: d.Title}}, Data: d})
}

// postLabels serves "/-/labels" (create), "/-/labels/<id>" (edit) and
// "/-/labels/<id>/delete".
func (pg *issuePages) postLabels(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	rest := r.PathValue("rest")
	id, action, _ := strings.Cut(rest, "/")
	if rest != "" {
		if _, ok := parseIID(id); !ok || (action != "" && action != "delete") {
			pg.site.NotFound(w, r)
			return
		}
	}
	if action == "delete" {
		if err := pg.ownLabel(r, full, id); err != nil {
			pg.labelFailed(w, r, err)
			return
		}
		if err := pg.s.DeleteLabel(ctx, full, id); err != nil {
			pg.labelFailed(w, r, err)
			return
		}
		pg.site.Redirect(w, r, labelsURL(full, ""))
		return
	}
	f := labelForm{Name: r.PostFormValue("name"), Color: strings.TrimSpace(r.PostFormValue("color")), Description: r.PostFormValue("description")}
	in := issue.LabelFields{Name: &f.Name, Color: &f.Color, Description: &f.Description}
	var err error
	if id == "" {
		_, err = pg.s.CreateLabel(ctx, full, in)
	} else if err = pg.ownLabel(r, full, id); err == nil {
		_, err = pg.s.UpdateLabel(ctx, full, id, in)
	}
	var missing *issue.ParamsError
	switch {
	case err == nil:
		pg.site.Redirect(w, r, labelsURL(full, ""))
	case errors.Is(err, issue.ErrLabelExists):
		pg.labelForm(w, r, id, f, "A label of that name exists already.")
	case errors.As(err, &missing) || errors.Is(err, issue.ErrMissing):
		pg.labelForm(w, r, id, f, "The name and the colour are required.")
	case errors.Is(err, issue.ErrInvalid) || errors.Is(err, issue.ErrInvalidParam) || errors.Is(err, issue.ErrInvalidValue):
		pg.labelForm(w, r, id, f, "The label was not saved: "+invalidText(err))
	default:
		pg.labelFailed(w, r, err)
	}
}

// ownLabel checks that label id is the project's own (a group's label is
// changed on the group): ErrLabelNotFound otherwise.
func (pg *issuePages) ownLabel(r *http.Request, full, id string) error {
	info, err := pg.s.writeProject(r.Context(), full)
	if err != nil {
		return err
	}
	l, err := pg.s.GetLabel(r.Context(), full, id)
	if err != nil {
		return err
	}
	if l.ProjectID != info.ID {
		return issue.ErrLabelNotFound
	}
	return nil
}

func (pg *issuePages) labelFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, issue.ErrLabelNotFound) {
		pg.site.NotFound(w, r)
		return
	}
	pg.fail(w, r, err)
}

type milestoneRow struct {
	IID                 int64
	Title, Href, State  string
	DueDate, StartDate  string
	Description         string
	EditHref, StateHref string
	Open                bool
}

type milestonesData struct {
	States          []stateTab
	Rows            []milestoneRow
	NewHref         string
	Empty           string
	Milestone       *milestoneRow
	Issues          []issueRow
	IssuesTotal     int
	Form            milestoneForm
	Action, Problem string
	CancelHref      string
	Title           string
}

type milestoneForm struct {
	Title, Description, DueDate, StartDate string
}

// getMilestones serves "/-/milestones", "/-/milestones/new",
// "/-/milestones/<iid>" and "/-/milestones/<iid>/edit".
func (pg *issuePages) getMilestones(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("rest")
	switch {
	case rest == "":
		pg.milestones(w, r)
		return
	case rest == "new":
		pg.milestoneForm(w, r, 0, milestoneForm{}, "")
		return
	}
	num, sub, _ := strings.Cut(rest, "/")
	iid, ok := parseIID(num)
	switch {
	case !ok:
		pg.site.NotFound(w, r)
	case sub == "":
		pg.milestone(w, r, int64(iid))
	case sub == "edit":
		pg.milestoneForm(w, r, int64(iid), milestoneForm{}, "")
	default:
		pg.site.NotFound(w, r)
	}
}

// milestoneByIID is the project's milestone numbered iid.
func (pg *issuePages) milestoneByIID(r *http.Request, full string, iid int64) (issue.Milestone, error) {
	list, _, err := pg.s.Milestones(r.Context(), full, issue.MilestoneQuery{IIDs: []int64{iid}, Limit: 1})
	if err != nil {
		return issue.Milestone{}, err
	}
	if len(list) == 0 {
		return issue.Milestone{}, issue.ErrMilestoneNotFound
	}
	return list[0], nil
}

func (pg *issuePages) milestoneRow(info projects.ProjectInfo, m issue.Milestone, manage bool) milestoneRow {
	full := info.PathWithNamespace
	self := milestonesURL(full, "/"+strconv.FormatInt(m.IID, 10))
	row := milestoneRow{IID: m.IID, Title: m.Title, Href: pg.site.URL(self), State: m.State, DueDate: m.DueDate, StartDate: m.StartDate,
		Description: m.Description, Open: m.State == "active"}
	if manage {
		row.EditHref = pg.site.URL(self + "/edit")
		if row.Open {
			row.StateHref = pg.site.URL(self + "/close")
		} else {
			row.StateHref = pg.site.URL(self + "/activate")
		}
	}
	return row
}

// mayManageMilestones: Masters and above, on a project that is not
// archived (the API's rule for milestone changes).
func mayManageMilestones(r *http.Request, info projects.ProjectInfo) bool {
	return auth.FromContext(r.Context()).User != nil && info.Level >= projects.Master && !info.Archived
}

// milestones lists the project's milestones by state.
func (pg *issuePages) milestones(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	state := r.URL.Query().Get("state")
	if state != "closed" && state != "all" {
		state = "active"
	}
	manage := mayManageMilestones(r, info)
	d := milestonesData{Empty: "There are no milestones to show."}
	if manage {
		d.NewHref = pg.site.URL(milestonesURL(full, "/new"))
	}
	for _, st := range []struct{ key, label, query string }{{"active", "Open", "active"}, {"closed", "Closed", "closed"}, {"all", "All", ""}} {
		list, n, err := pg.s.Milestones(ctx, full, issue.MilestoneQuery{State: st.query, Limit: 1000})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		d.States = append(d.States, stateTab{Key: st.key, Label: st.label, Count: n, Current: st.key == state,
			Href: pg.site.URL(milestonesURL(full, "") + "?state=" + st.key)})
		if st.key == state {
			for _, m := range list {
				d.Rows = append(d.Rows, pg.milestoneRow(info, m, manage))
			}
		}
	}
	pg.t.Render(w, r, "milestones", web.Page{Title: "Milestones · " + info.NameWithNamespace, Project: header(info), Tab: "issues",
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Milestones"}}, Data: d})
}

// milestone is one milestone with its issues (the first 100).
func (pg *issuePages) milestone(w http.ResponseWriter, r *http.Request, iid int64) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	m, err := pg.milestoneByIID(r, full, iid)
	if errors.Is(err, issue.ErrMilestoneNotFound) {
		pg.site.NotFound(w, r)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	list, total, err := pg.s.MilestoneIssues(ctx, full, m.ID, 0, 100)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	row := pg.milestoneRow(info, m, mayManageMilestones(r, info))
	d := milestonesData{Milestone: &row, IssuesTotal: total}
	if d.Issues, err = pg.rows(ctx, info, list); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.t.Render(w, r, "milestone", web.Page{Title: m.Title + " · Milestones · " + info.NameWithNamespace, Project: header(info), Tab: "issues",
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Milestones", Href: milestonesURL(full, "")}, {Label: m.Title}}, Data: d})
}

// milestoneForm is the new milestone form (iid 0) or one's edit form.
func (pg *issuePages) milestoneForm(w http.ResponseWriter, r *http.Request, iid int64, f milestoneForm, problem string) {
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
	if !mayManageMilestones(r, info) {
		pg.site.Error(w, r, http.StatusForbidden)
		return
	}
	d := milestonesData{Form: f, Problem: problem, Action: pg.site.URL(milestonesURL(full, "")), CancelHref: pg.site.URL(milestonesURL(full, "")),
		Title: "New milestone"}
	if iid != 0 {
		m, err := pg.milestoneByIID(r, full, iid)
		if errors.Is(err, issue.ErrMilestoneNotFound) {
			pg.site.NotFound(w, r)
			return
		}
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		if problem == "" {
			d.Form = milestoneForm{Title: m.Title, Description: m.Description, DueDate: m.DueDate, StartDate: m.StartDate}
		}
		self := milestonesURL(full, "/"+strconv.FormatInt(iid, 10))
		d.Action, d.CancelHref, d.Title = pg.site.URL(self), pg.site.URL(self), "Edit milestone"
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	pg.t.Render(w, r, "milestone_form", web.Page{Title: d.Title + " · " + info.NameWithNamespace, Project: header(info), Tab: "issues", Status: status,
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Milestones", Href: milestonesURL(full, "")}, {Label: d.Title}}, Data: d})
}

// postMilestones serves "/-/milestones" (create), "/-/milestones/<iid>"
// (edit), ".../close" and ".../activate".
func (pg *issuePages) postMilestones(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	rest := r.PathValue("rest")
	var iid int64
	var action string
	if rest != "" {
		num, a, _ := strings.Cut(rest, "/")
		n, ok := parseIID(num)
		if !ok || (a != "" && a != "close" && a != "activate") {
			pg.site.NotFound(w, r)
			return
		}
		iid, action = int64(n), a
	}
	var m issue.Milestone
	if iid != 0 {
		var err error
		if m, err = pg.milestoneByIID(r, full, iid); err != nil {
			if errors.Is(err, issue.ErrMilestoneNotFound) {
				pg.site.NotFound(w, r)
				return
			}
			pg.fail(w, r, err)
			return
		}
	}
	if action != "" {
		ev := issue.CloseMilestone
		if action == "activate" {
			ev = issue.ActivateMilestone
		}
		if _, err := pg.s.UpdateMilestone(ctx, full, m.ID, issue.MilestoneFields{}, ev); err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.site.Redirect(w, r, milestonesURL(full, "/"+strconv.FormatInt(iid, 10)))
		return
	}
	f := milestoneForm{Title: r.PostFormValue("title"), Description: r.PostFormValue("description"),
		DueDate: strings.TrimSpace(r.PostFormValue("due_date")), StartDate: strings.TrimSpace(r.PostFormValue("start_date"))}
	in := issue.MilestoneFields{Title: &f.Title, Description: &f.Description, DueDate: &f.DueDate, StartDate: &f.StartDate}
	var err error
	if iid == 0 {
		m, err = pg.s.CreateMilestone(ctx, full, in)
	} else {
		m, err = pg.s.UpdateMilestone(ctx, full, m.ID, in, "")
	}
	var missing *issue.ParamsError
	var invalid *issue.MilestoneError
	switch {
	case err == nil:
		pg.site.Redirect(w, r, milestonesURL(full, "/"+strconv.FormatInt(m.IID, 10)))
	case errors.As(err, &missing) || errors.Is(err, issue.ErrMissing):
		pg.milestoneForm(w, r, iid, f, "The title is required.")
	case errors.As(err, &invalid):
		pg.milestoneForm(w, r, iid, f, "The milestone was not saved: "+invalid.Field+" "+invalid.Text)
	case errors.Is(err, issue.ErrInvalid) || errors.Is(err, issue.ErrInvalidParam) || errors.Is(err, issue.ErrInvalidValue):
		pg.milestoneForm(w, r, iid, f, "The milestone was not saved: "+invalidText(err))
	default:
		pg.fail(w, r, err)
	}
}
