package internal

// A project's settings pages (issue 30), for its Masters and owners:
// General (/-/edit: name, description, visibility, default branch,
// features, rename, archive, transfer, delete) and Members
// (/-/project_members: members and the groups the project is shared
// with). Every form posts to the same service call as the API's
// (PUT /projects/:id, POST /projects/:id/archive, PUT .../transfer,
// DELETE /projects/:id, the members and share endpoints), with the
// browser's principal, so the permissions are the API's: a visitor below
// Master gets the 404 page for the pages and their forms alike, and an
// Owner-only action (visibility, archive, transfer, delete) asked by a
// Master is refused by the service (403).
//
// The default branch is chosen among the repository's branches, which
// belong to the repository module, a layer above this one: its
// BranchChecker names them too (project.BranchLister). Without a list (no
// such checker, an empty repository, too many branches) the page has a
// text field, and the service checks the name; an unknown branch is
// ignored, as GitLab 9.x does, and the page says so. Avatars: the service keeps none for
// projects (avatar_url is always null), so the page offers no upload.

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// settingsRefusals sort the services' errors for the settings pages: a
// project, group or member the visitor may not see is missing, a refused
// action 403.
var settingsRefusals = web.Refusals{
	Missing:   []error{project.ErrNotFound, project.ErrGroupNotFound},
	Forbidden: []error{project.ErrForbidden, project.ErrLastOwner},
	Page:      "settings page",
}

// maxBranchChoices bounds the branches the default branch's select
// offers; a repository with more gets a text field.
const maxBranchChoices = 500

// maxNamespaceChoices bounds the namespaces the transfer form offers.
const maxNamespaceChoices = 100

// maxGroupChoices bounds the groups the share form offers.
const maxGroupChoices = 100

func (pg *pages) registerSettingsPages(s *web.Site) {
	s.AddProjectTab(web.ProjectTab{Key: "settings", Label: "Settings", Suffix: "/-/edit", Order: 90, MinLevel: project.Master})
	s.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "general", Label: "General", Path: "/-/edit", Order: 10, MinLevel: project.Master})
	s.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "members", Label: "Members", Path: "/-/project_members", Order: 20, MinLevel: project.Master})
	s.Project("GET edit", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("rest") != "" {
			pg.site.NotFound(w, r)
			return
		}
		pg.generalPage(w, r, "", http.StatusOK)
	})
	s.Project("POST edit", pg.generalPost)
	s.Project("GET project_members", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("rest") != "" {
			pg.site.NotFound(w, r)
			return
		}
		pg.membersPage(w, r, "", http.StatusOK)
	})
	s.Project("POST project_members", pg.membersPost)
	pg.registerGroupSettingsPages(s)
}

// openSettings resolves the page's project for its settings: anonymous
// visitors are sent to sign in, anyone below Master (or who may not see
// the project) gets the 404 page, as the settings do not exist for them.
// ok is false once an answer is written.
func (pg *pages) openSettings(w http.ResponseWriter, r *http.Request) (*resolved, project.Info, bool) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return nil, project.Info{}, false
	}
	res, err := pg.svc.resolve(ctx, r.PathValue("owner"))
	if err != nil {
		pg.site.Missing(w, r)
		return nil, project.Info{}, false
	}
	info := pg.svc.info(ctx, res)
	if info.Level < project.Master {
		pg.site.NotFound(w, r)
		return nil, project.Info{}, false
	}
	return res, info, true
}

// settingsHeader is the project's header on its settings pages.
func settingsHeader(info project.Info) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// settingsURL is a project's settings page (escaped, unprefixed): key
// "edit" or "project_members", then suffix.
func settingsURL(full, key, suffix string) string {
	return "/" + web.EscapePath(full) + "/-/" + key + suffix
}

// featureSwitch is a feature's check box on the General page.
type featureSwitch struct {
	Name, Label string
	On          bool
}

// featureLabels are the switches the General page offers, by their API
// names, in GitLab's order.
var featureLabels = []struct{ name, label string }{
	{"issues_enabled", "Issues"},
	{"merge_requests_enabled", "Merge requests"},
	{"jobs_enabled", "Pipelines and jobs"},
	{"wiki_enabled", "Wiki"},
	{"snippets_enabled", "Snippets"},
	{"lfs_enabled", "Git LFS"},
	{"container_registry_enabled", "Container registry"},
	{"shared_runners_enabled", "Shared runners"},
	{"public_jobs", "Public pipelines (job logs visible to anyone who sees the project)"},
	{"request_access_enabled", "Allow users to request access"},
	{"only_allow_merge_if_pipeline_succeeds", "Merge only when the pipeline succeeds"},
	{"only_allow_merge_if_all_discussions_are_resolved", "Merge only when all threads are resolved"},
}

// switchOf is the field of Switches a feature's name sets.
func switchOf(sw *project.Switches, name string) **bool {
	switch name {
	case "issues_enabled":
		return &sw.IssuesEnabled
	case "merge_requests_enabled":
		return &sw.MergeRequestsEnabled
	case "jobs_enabled":
		return &sw.JobsEnabled
	case "wiki_enabled":
		return &sw.WikiEnabled
	case "snippets_enabled":
		return &sw.SnippetsEnabled
	case "lfs_enabled":
		return &sw.LFSEnabled
	case "container_registry_enabled":
		return &sw.ContainerRegistryEnabled
	case "shared_runners_enabled":
		return &sw.SharedRunnersEnabled
	case "public_jobs":
		return &sw.PublicJobs
	case "request_access_enabled":
		return &sw.RequestAccessEnabled
	case "only_allow_merge_if_pipeline_succeeds":
		return &sw.OnlyAllowMergeIfPipelineSucceeds
	case "only_allow_merge_if_all_discussions_are_resolved":
		return &sw.OnlyAllowMergeIfAllDiscussionsAreResolved
	}
	return nil
}

// option is an entry of a select.
type option struct {
	Value, Label string
	Selected     bool
}

type generalData struct {
	Action                            string // the form's base (prefixed): /<full>/-/edit
	Name, Path, FullPath, Description string
	Namespace                         string // the namespace's full path, before the project's path
	Visibility, DefaultBranch         string
	Visibilities                      []option
	// Branches are the default branch's choices; nil for a text field.
	Branches                       []option
	Features                       []featureSwitch
	Archived                       bool
	MayChangeVisibility, MayRemove bool
	Namespaces                     []option
	Problem                        string
}

// generalPage is /-/edit, with problem (a refused form's reason) shown
// above the forms.
func (pg *pages) generalPage(w http.ResponseWriter, r *http.Request, problem string, status int) {
	res, info, ok := pg.openSettings(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	pr := auth.FromContext(ctx)
	d := generalData{Action: pg.site.URL(settingsURL(info.PathWithNamespace, "edit", "")), Name: res.p.Name, Path: res.p.Path,
		FullPath: info.PathWithNamespace, Namespace: res.ni.path, Description: info.Description, Visibility: res.p.Visibility,
		DefaultBranch: res.p.DefaultBranch, Archived: res.p.Archived, Problem: problem,
		MayChangeVisibility: allowed(pr, res.p, res.l, project.ChangeVisibility),
		MayRemove:           allowed(pr, res.p, res.l, project.RemoveProject)}
	for _, v := range []string{project.Private, project.Internal, project.Public} {
		d.Visibilities = append(d.Visibilities, option{Value: v, Label: v, Selected: v == res.p.Visibility})
	}
	if names, err := pg.svc.branchNames(ctx, res.p.ID, maxBranchChoices+1); err == nil && len(names) > 0 && len(names) <= maxBranchChoices &&
		slices.Contains(names, res.p.DefaultBranch) {
		for _, n := range names {
			d.Branches = append(d.Branches, option{Value: n, Label: n, Selected: n == res.p.DefaultBranch})
		}
	}
	on := res.p.Features.Map()
	for _, f := range featureLabels {
		d.Features = append(d.Features, featureSwitch{Name: f.name, Label: f.label, On: on[f.name]})
	}
	if d.MayRemove {
		rows, _, err := pg.svc.listNamespaces(ctx, "", 0, maxNamespaceChoices)
		if err != nil {
			pg.site.Fail(w, r, err, settingsRefusals)
			return
		}
		for _, n := range rows {
			if n.ns.ID == res.p.NamespaceID {
				continue
			}
			d.Namespaces = append(d.Namespaces, option{Value: strconv.FormatInt(n.ns.ID, 10), Label: n.ni.path})
		}
	}
	pg.t.Render(w, r, "settings_general", web.Page{Title: "General settings · " + info.NameWithNamespace, Project: settingsHeader(info),
		Tab: "settings", Area: web.AreaProjectSettings, Section: "general", Status: status,
		Crumbs: []web.Crumb{{Label: res.p.Name, Href: "/" + web.EscapePath(info.PathWithNamespace)}, {Label: "General settings"}}, Data: d})
}

// generalPost runs one of the General page's forms, by what follows
// /-/edit: "" (the settings), "rename", "archive", "unarchive",
// "transfer", "delete".
func (pg *pages) generalPost(w http.ResponseWriter, r *http.Request) {
	res, info, ok := pg.openSettings(w, r)
	if !ok {
		return
	}
	ctx, full := r.Context(), info.PathWithNamespace
	ref := strconv.FormatInt(res.p.ID, 10)
	var err error
	next := settingsURL(full, "edit", "")
	switch r.PathValue("rest") {
	case "":
		var f project.Fields
		desc := r.PostFormValue("description")
		f.Description = &desc
		if name := r.PostFormValue("name"); name != "" {
			f.Name = &name
		}
		if _, given := r.PostForm["visibility"]; given {
			v := r.PostFormValue("visibility")
			f.Visibility = &v
		}
		branch := strings.TrimSpace(r.PostFormValue("default_branch"))
		if branch != "" && branch != res.p.DefaultBranch {
			f.DefaultBranch = &branch
		}
		if r.PostFormValue("features") == "1" {
			for _, fl := range featureLabels {
				on := r.PostFormValue(fl.name) == "1"
				*switchOf(&f.Switches, fl.name) = &on
			}
		}
		var p project.Project
		p, err = pg.svc.UpdateProject(ctx, ref, f)
		if err == nil && f.DefaultBranch != nil && p.DefaultBranch != *f.DefaultBranch {
			pg.generalPage(w, r, "The other settings were saved, but the repository has no branch named "+*f.DefaultBranch+
				": the default branch is still "+p.DefaultBranch+".", http.StatusUnprocessableEntity)
			return
		}
	case "rename":
		name, path := r.PostFormValue("name"), strings.TrimSpace(r.PostFormValue("path"))
		var p project.Project
		p, err = pg.svc.UpdateProject(ctx, ref, project.Fields{Name: &name, Path: &path})
		if err == nil {
			next = settingsURL(p.PathWithNamespace, "edit", "")
		}
	case "archive":
		_, err = pg.svc.ArchiveProject(ctx, ref)
	case "unarchive":
		_, err = pg.svc.UnarchiveProject(ctx, ref)
	case "transfer":
		var p project.Project
		p, err = pg.svc.TransferProject(ctx, ref, r.PostFormValue("namespace_id"))
		if err == nil {
			next = settingsURL(p.PathWithNamespace, "edit", "")
		}
	case "delete":
		if r.PostFormValue("confirm_path") != full {
			pg.generalPage(w, r, "The project was not deleted: type "+full+" to confirm.", http.StatusUnprocessableEntity)
			return
		}
		if err = pg.svc.DeleteProject(ctx, ref); err == nil {
			next = "/dashboard/projects"
		}
	default:
		pg.site.NotFound(w, r)
		return
	}
	if text, refused := problemText(err); refused {
		pg.generalPage(w, r, text, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pg.site.Fail(w, r, err, settingsRefusals)
		return
	}
	pg.site.Redirect(w, r, next)
}

// problemText is the reason of a refused form the visitor can mend (a
// field's value, a name taken, a transfer the rules refuse), in the
// service's words; refused is false for any other error.
func problemText(err error) (text string, refused bool) {
	var fields project.FieldErrors
	var params *project.ParamsError
	var transfer *project.TransferError
	var taken *project.TakenError
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &fields):
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+strings.Join(fields[k], ", "))
		}
		return capitalize(strings.Join(parts, "; ")) + ".", true
	case errors.As(err, &transfer):
		return transfer.Reason, true
	case errors.As(err, &taken):
		return "That name or path is already taken there.", true
	case errors.As(err, &params):
		switch {
		case errors.Is(err, project.ErrMissing), errors.Is(err, project.ErrNothingGiven):
			return "Please fill in: " + strings.Join(params.Params, ", ") + ".", true
		default:
			return "Invalid value: " + strings.Join(params.Params, ", ") + ".", true
		}
	case errors.Is(err, project.ErrNamespaceNotFound):
		return "Please select a namespace you may create projects in.", true
	case errors.Is(err, project.ErrMemberExists):
		return "That user is a member already.", true
	case errors.Is(err, project.ErrUserNotFound):
		return "There is no such user.", true
	case errors.Is(err, project.ErrAlreadyShared):
		return "The project is shared with that group already.", true
	case errors.Is(err, project.ErrLastOwner):
		return "A group must keep at least one Owner.", true
	case errors.Is(err, project.ErrShareOwnGroup):
		return "A project cannot be shared with its own group or the groups above it.", true
	}
	return "", false
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
