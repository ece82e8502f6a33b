package internal

// A user's profile, /<username>: the public view of the user that GET
// /users/:id gives anyone (name, username, avatar) and the projects of
// their personal namespace the visitor may see (GET /users/:id/projects).
// The user's activity feed belongs here too; it is a later step of issue
// 28 (the feed is the events module's).

import (
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/identity"
)

type profileData struct {
	Name, Username string
	List           *listView
}

// profile serves the profile of username; it declines (false, nothing
// written) an unknown or blocked user, whose page does not exist, so the
// visitor gets the 404 page.
func (pg *pages) profile(w http.ResponseWriter, r *http.Request, username string) bool {
	ctx := r.Context()
	u, err := pg.svc.users.UserByUsername(ctx, username)
	if errors.Is(err, identity.ErrUserNotFound) || (err == nil && u.State != "active") {
		return false
	}
	if err != nil {
		pg.fail(w, r, err)
		return true
	}
	if u.Username != username {
		// Usernames are found case-insensitively: the page is the
		// username's own spelling.
		pg.site.Redirect(w, r, "/"+web.EscapePath(u.Username))
		return true
	}
	f := &listFilter{}
	sort, pageNo := listQuery(r, f)
	rows, total, err := pg.svc.listAmong(ctx, f, pg.svc.personalProjects(u.ID))
	if err != nil {
		pg.fail(w, r, err)
		return true
	}
	list := pg.newListView("/"+web.EscapePath(u.Username), rows, total, pageNo, f.Search, sort)
	list.Empty = "No projects to show."
	if f.Search != "" {
		list.Empty = "No project matches your search."
	}
	pg.t.Render(w, r, "user", web.Page{Title: u.Name + " (@" + u.Username + ")", Data: profileData{Name: u.Name, Username: u.Username, List: list}})
	return true
}
