package internal

import (
	"context"
	"embed"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The admin area's users pages (/admin/users): the list with its search
// and filters, creating an account, and one account's page with its
// edits, block, administrator switch and delete. Every call goes to the
// Service as the browser's principal, whose own checks (administrators
// only; never oneself or the last administrator) are the API's.

//go:embed templates/admin/*.html
var adminTemplateFiles embed.FS

// adminUsersPerPage is the length of a page of the users list.
const adminUsersPerPage = 20

// adminRefusals sort the Service's errors for Site.Fail.
var adminRefusals = web.Refusals{Missing: []error{user.ErrUserNotFound}, SignIn: []error{auth.ErrUnauthorized},
	Page: "admin users"}

type adminPages struct {
	svc  *Service
	site *web.Site
	tmpl *web.Templates
}

// NewAdminPages serves the admin area's users pages and adds the users
// count to its overview.
func NewAdminPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "identity-admin", Register: func(site *web.Site) {
		p := &adminPages{svc: s, site: site, tmpl: site.Templates(adminTemplateFiles, "templates/admin/*.html")}
		site.AddSection(web.Section{Area: web.AreaAdmin, Key: "users", Label: "Users", Path: "/admin/users", Order: 20})
		site.AddAdminStats(10, p.stats)
		site.Admin("GET /admin/users", p.list)
		site.Admin("GET /admin/users/new", p.newForm)
		site.Admin("POST /admin/users", p.create)
		site.Admin("GET /admin/users/{username}", p.show)
		site.Admin("GET /admin/users/{username}/edit", p.editForm)
		site.Admin("POST /admin/users/{username}", p.update)
		site.Admin("POST /admin/users/{username}/block", p.block)
		site.Admin("POST /admin/users/{username}/unblock", p.unblock)
		site.Admin("POST /admin/users/{username}/admin", p.setAdmin)
		site.Admin("POST /admin/users/{username}/delete", p.remove)
	}}
}

// stats are the overview's user counts.
func (p *adminPages) stats(ctx context.Context) []web.Stat {
	count := func(opts user.ListOptions) string {
		_, n, err := p.svc.Accounts(ctx, opts, 0, 0)
		if err != nil {
			return "?"
		}
		return strconv.Itoa(n)
	}
	return []web.Stat{
		{Group: web.StatsCounts, Label: "Users", Value: count(user.ListOptions{}), Href: "/admin/users"},
		{Group: web.StatsCounts, Label: "Blocked users", Value: count(user.ListOptions{Blocked: true}), Href: "/admin/users?filter=blocked"},
		{Group: web.StatsCounts, Label: "Administrators", Value: count(user.ListOptions{Admins: true}), Href: "/admin/users?filter=admins"},
	}
}

// userFilters are the list's filters, by their query value.
var userFilters = []struct{ Key, Label string }{
	{"", "All"}, {"active", "Active"}, {"blocked", "Blocked"}, {"admins", "Administrators"}, {"external", "External"},
}

type filterLink struct {
	Label, Href string
	Active      bool
}

type usersData struct {
	Search     string
	Filter     string
	Filters    []filterLink
	Users      []user.Account
	Total      int
	Page       int
	Prev, Next string
}

func (p *adminPages) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	search, filter := strings.TrimSpace(q.Get("search")), q.Get("filter")
	opts := user.ListOptions{Search: search}
	switch filter {
	case "":
	case "active":
		opts.Active = true
	case "blocked":
		opts.Blocked = true
	case "admins":
		opts.Admins = true
	case "external":
		opts.External = true
	default:
		p.site.ErrorMessage(w, r, http.StatusBadRequest, "Unknown filter", "The users list has no such filter.")
		return
	}
	if len(search) > 255 {
		p.site.ErrorMessage(w, r, http.StatusBadRequest, "Search too long", "Search for at most 255 characters.")
		return
	}
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 || page > 100000 {
		page = 1
	}
	accounts, total, err := p.svc.Accounts(r.Context(), opts, (page-1)*adminUsersPerPage, adminUsersPerPage)
	if err != nil {
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	d := usersData{Search: search, Filter: filter, Users: accounts, Total: total, Page: page}
	link := func(f string, pg int) string {
		v := url.Values{}
		if search != "" {
			v.Set("search", search)
		}
		if f != "" {
			v.Set("filter", f)
		}
		if pg > 1 {
			v.Set("page", strconv.Itoa(pg))
		}
		if len(v) == 0 {
			return "/admin/users"
		}
		return "/admin/users?" + v.Encode()
	}
	for _, f := range userFilters {
		d.Filters = append(d.Filters, filterLink{Label: f.Label, Href: link(f.Key, 1), Active: f.Key == filter})
	}
	if page > 1 {
		d.Prev = link(filter, page-1)
	}
	if page*adminUsersPerPage < total {
		d.Next = link(filter, page+1)
	}
	p.tmpl.Render(w, r, "users", web.Page{Title: "Users · Admin area", Area: web.AreaAdmin, Section: "users", Data: d})
}

// userForm is the create and edit form, filled in again when refused.
type userForm struct {
	Action        string
	Editing       bool
	Username      string
	Name          string
	Email         string
	Admin         bool
	External      bool
	CanCreateGrp  bool
	ProjectsLimit string
	ResetPassword bool
	Problems      []string
}

func (p *adminPages) newForm(w http.ResponseWriter, r *http.Request) {
	p.renderForm(w, r, http.StatusOK, userForm{Action: "/admin/users", CanCreateGrp: true, ProjectsLimit: "100000", ResetPassword: true})
}

func (p *adminPages) renderForm(w http.ResponseWriter, r *http.Request, status int, f userForm) {
	title := "New user"
	crumbs := []web.Crumb{{Label: "Users", Href: "/admin/users"}, {Label: "New"}}
	if f.Editing {
		title = "Edit " + f.Username
		crumbs = []web.Crumb{{Label: "Users", Href: "/admin/users"}, {Label: f.Username, Href: "/admin/users/" + url.PathEscape(f.Username)}, {Label: "Edit"}}
	}
	p.tmpl.Render(w, r, "user_form", web.Page{Title: title + " · Admin area", Area: web.AreaAdmin, Section: "users",
		Crumbs: crumbs, Status: status, Data: f})
}

// postedFields reads the form's fields; the checkboxes are always given
// (unchecked is false), a blank password or projects limit is not.
func postedFields(r *http.Request, f *userForm) (user.Fields, string) {
	f.Username = strings.TrimSpace(r.PostFormValue("username"))
	f.Name = strings.TrimSpace(r.PostFormValue("name"))
	f.Email = strings.TrimSpace(r.PostFormValue("email"))
	f.Admin = r.PostFormValue("admin") == "1"
	f.External = r.PostFormValue("external") == "1"
	f.CanCreateGrp = r.PostFormValue("can_create_group") == "1"
	f.ProjectsLimit = strings.TrimSpace(r.PostFormValue("projects_limit"))
	fields := user.Fields{Username: &f.Username, Name: &f.Name, Email: &f.Email, Admin: &f.Admin,
		External: &f.External, CanCreateGroup: &f.CanCreateGrp}
	if f.ProjectsLimit != "" {
		n, err := strconv.Atoi(f.ProjectsLimit)
		if err != nil || n < 0 {
			return fields, "Projects limit must be a whole number, 0 or more."
		}
		fields.ProjectsLimit = &n
	}
	if pw := r.PostFormValue("password"); pw != "" {
		fields.Password = &pw
	}
	return fields, ""
}

// problems are an InvalidError's texts, one per line ("email is invalid").
func problems(err error) []string {
	var inv user.InvalidError
	var taken *user.TakenError
	var forbidden *auth.ForbiddenError
	switch {
	case errors.As(err, &inv):
		var out []string
		for field, texts := range inv {
			for _, t := range texts {
				out = append(out, strings.ReplaceAll(field, "_", " ")+" "+t)
			}
		}
		slices.Sort(out)
		return out
	case errors.As(err, &taken):
		return []string{strings.ReplaceAll(taken.Field, "_", " ") + " has already been taken"}
	case errors.As(err, &forbidden):
		return []string{forbidden.Reason}
	}
	return nil
}

func (p *adminPages) create(w http.ResponseWriter, r *http.Request) {
	f := userForm{Action: "/admin/users"}
	fields, bad := postedFields(r, &f)
	f.ResetPassword = r.PostFormValue("reset_password") == "1"
	if bad != "" {
		f.Problems = []string{bad}
		p.renderForm(w, r, http.StatusBadRequest, f)
		return
	}
	acc, err := p.svc.CreateAccount(r.Context(), user.NewAccount{Fields: fields, ResetPassword: f.ResetPassword})
	if err != nil {
		if f.Problems = problems(err); f.Problems != nil {
			p.renderForm(w, r, http.StatusBadRequest, f)
			return
		}
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	p.site.Redirect(w, r, "/admin/users/"+url.PathEscape(acc.Username))
}

// account is the account of the path's username (blocked ones too).
func (p *adminPages) account(ctx context.Context, username string) (user.Account, error) {
	if username == "" || len(username) > 255 {
		return user.Account{}, user.ErrUserNotFound
	}
	list, _, err := p.svc.Accounts(ctx, user.ListOptions{Username: username}, 0, 1)
	if err != nil {
		return user.Account{}, err
	}
	if len(list) == 0 {
		return user.Account{}, user.ErrUserNotFound
	}
	return list[0], nil
}

type userData struct {
	Account user.Account
	// Self is the administrator's own account: no block, delete or
	// impersonation of oneself is offered.
	Self    bool
	Blocked bool
	// DirectoryBlocked: the directory blocked the account; only it can
	// unblock.
	DirectoryBlocked bool
	Notice           string
}

// notices are the flashes a redirect after an action names (?done=...).
var notices = map[string]string{
	"blocked": "The user was blocked: their sessions and tokens no longer work.", "unblocked": "The user was unblocked.",
	"admin": "The user is now an administrator.", "not-admin": "The user is no longer an administrator.",
	"updated": "The user was updated.",
}

func (p *adminPages) show(w http.ResponseWriter, r *http.Request) {
	acc, err := p.account(r.Context(), r.PathValue("username"))
	if err != nil {
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	me := auth.FromContext(r.Context()).User
	d := userData{Account: acc, Self: me != nil && me.ID == acc.ID, Blocked: acc.State != user.StateActive,
		DirectoryBlocked: acc.State == user.StateLDAPBlocked, Notice: notices[r.URL.Query().Get("done")]}
	p.tmpl.Render(w, r, "user", web.Page{Title: acc.Username + " · Users · Admin area", Area: web.AreaAdmin, Section: "users",
		Crumbs: []web.Crumb{{Label: "Users", Href: "/admin/users"}, {Label: acc.Username}}, Data: d})
}

func (p *adminPages) editForm(w http.ResponseWriter, r *http.Request) {
	acc, err := p.account(r.Context(), r.PathValue("username"))
	if err != nil {
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	p.renderForm(w, r, http.StatusOK, userForm{Action: "/admin/users/" + url.PathEscape(acc.Username), Editing: true,
		Username: acc.Username, Name: acc.Name, Email: acc.Email, Admin: acc.Admin, External: acc.External,
		CanCreateGrp: acc.CanCreateGroup, ProjectsLimit: strconv.Itoa(acc.ProjectsLimit)})
}

func (p *adminPages) update(w http.ResponseWriter, r *http.Request) {
	acc, err := p.account(r.Context(), r.PathValue("username"))
	if err != nil {
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	f := userForm{Action: "/admin/users/" + url.PathEscape(acc.Username), Editing: true}
	fields, bad := postedFields(r, &f)
	if bad != "" {
		f.Problems = []string{bad}
		p.renderForm(w, r, http.StatusBadRequest, f)
		return
	}
	updated, err := p.svc.UpdateAccount(r.Context(), acc.ID, fields)
	if err != nil {
		if f.Problems = problems(err); f.Problems != nil {
			f.Username = acc.Username
			p.renderForm(w, r, http.StatusBadRequest, f)
			return
		}
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	p.site.Redirect(w, r, "/admin/users/"+url.PathEscape(updated.Username)+"?done=updated")
}

// act runs one of the account page's buttons and comes back to it with
// its notice; a refusal with a reason ("you cannot block yourself") is
// the 403 page saying so.
func (p *adminPages) act(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, acc user.Account) (string, error)) {
	acc, err := p.account(r.Context(), r.PathValue("username"))
	if err == nil {
		var done string
		if done, err = do(r.Context(), acc); err == nil {
			p.site.Redirect(w, r, "/admin/users/"+url.PathEscape(acc.Username)+"?done="+done)
			return
		}
	}
	var forbidden *auth.ForbiddenError
	if errors.As(err, &forbidden) && forbidden.Reason != "" {
		p.site.ErrorMessage(w, r, http.StatusForbidden, "Not allowed", forbidden.Reason)
		return
	}
	p.site.Fail(w, r, err, adminRefusals)
}

func (p *adminPages) block(w http.ResponseWriter, r *http.Request) {
	p.act(w, r, func(ctx context.Context, acc user.Account) (string, error) {
		_, err := p.svc.Block(ctx, acc.ID)
		return "blocked", err
	})
}

func (p *adminPages) unblock(w http.ResponseWriter, r *http.Request) {
	p.act(w, r, func(ctx context.Context, acc user.Account) (string, error) {
		_, err := p.svc.Unblock(ctx, acc.ID)
		return "unblocked", err
	})
}

func (p *adminPages) setAdmin(w http.ResponseWriter, r *http.Request) {
	p.act(w, r, func(ctx context.Context, acc user.Account) (string, error) {
		admin := r.PostFormValue("admin") == "1"
		_, err := p.svc.UpdateAccount(ctx, acc.ID, user.Fields{Admin: &admin})
		if admin {
			return "admin", err
		}
		return "not-admin", err
	})
}

// remove deletes an account once its username is typed again, as the
// confirmation.
func (p *adminPages) remove(w http.ResponseWriter, r *http.Request) {
	acc, err := p.account(r.Context(), r.PathValue("username"))
	if err != nil {
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	if r.PostFormValue("confirm_username") != acc.Username {
		p.site.ErrorMessage(w, r, http.StatusBadRequest, "Not deleted",
			"Type the username exactly to confirm that the account is to be deleted.")
		return
	}
	if _, err := p.svc.DeleteAccount(r.Context(), acc.ID); err != nil {
		var forbidden *auth.ForbiddenError
		if errors.As(err, &forbidden) && forbidden.Reason != "" {
			p.site.ErrorMessage(w, r, http.StatusForbidden, "Not allowed", forbidden.Reason)
			return
		}
		p.site.Fail(w, r, err, adminRefusals)
		return
	}
	p.site.Redirect(w, r, "/admin/users")
}
