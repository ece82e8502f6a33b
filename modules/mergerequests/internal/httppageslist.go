package internal

// The lists of merge requests (issue 29): a project's
// ("/-/merge_requests") and the visitor's across projects
// ("/dashboard/merge_requests"). Both ask the service the API asks
// (List with GET /projects/:id/merge_requests' filters, ListMine), so
// the page and the API list the same merge requests; each row shows the
// head pipeline's status, the target branch and the labels in their
// colours.

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxFilterText bounds a list's text filters (search, label, milestone,
// usernames), as the fields' maxlength does.
const maxFilterText = 255

type stateTab struct {
	Key, Label, Href string
	Count            int
	Current          bool
}

type sortOption struct {
	Key, Label string
	Selected   bool
}

type listData struct {
	Action, NewHref           string
	States                    []stateTab
	State, Search, Label      string
	Milestone                 string
	Author, Assignee          string
	Sorts                     []sortOption
	Rows                      []mrRow
	Total, Page, Pages        int
	PrevHref, NextHref, Empty string
}

var mrSorts = []struct {
	key, label string
	order      mergerequest.Order
	asc        bool
}{
	{"created_desc", "Newest", mergerequest.ByCreated, false},
	{"created_asc", "Oldest", mergerequest.ByCreated, true},
	{"updated_desc", "Recently updated", mergerequest.ByUpdated, false},
	{"updated_asc", "Least recently updated", mergerequest.ByUpdated, true},
}

// listStates are the state tabs of both lists.
var listStates = []struct{ key, label string }{{"opened", "Open"}, {"merged", "Merged"}, {"closed", "Closed"}, {"all", "All"}}

// stateTabs are the state tabs of counts, current the one shown.
func stateTabs(counts StateCounts, current string, href func(key string) string) []stateTab {
	var out []stateTab
	for _, st := range listStates {
		n := counts[stateOf(st.key)]
		if st.key == "all" {
			n = counts[mergerequest.Opened] + counts[mergerequest.Merged] + counts[mergerequest.Closed]
		}
		out = append(out, stateTab{Key: st.key, Label: st.label, Count: n, Current: st.key == current, Href: href(st.key)})
	}
	return out
}

// userFilter resolves a username filter to the user's id for q: ok is
// false for an unknown user (the list keeps nothing). The assignee's
// also takes "None" and "Any", as GitLab's.
func (pg *mrPages) userFilter(ctx context.Context, username string, assignee bool) (int64, bool) {
	switch {
	case username == "":
		return 0, true
	case assignee && strings.EqualFold(username, "none"):
		return mergerequest.AssignedToNone, true
	case assignee && strings.EqualFold(username, "any"):
		return mergerequest.AssignedToAny, true
	}
	u, err := pg.s.Lookup.LookupUser(ctx, strings.TrimPrefix(username, "@"))
	if err != nil || u == nil || strconv.FormatInt(u.ID, 10) == username {
		// Not a user, or a number (LookupUser takes ids too): the field
		// is a username.
		return 0, false
	}
	return u.ID, true
}

// list is a project's merge requests: a state's tab (with each state's
// count), search, label, milestone, author and assignee filters, an
// order, 20 a page; the service filters (List), as for the API.
func (pg *mrPages) list(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pg.s.readProject(ctx, full)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case "opened", "merged", "closed", "all":
	default:
		state = "opened"
	}
	text := func(name string) string { return truncate(strings.TrimSpace(q.Get(name)), maxFilterText) }
	search, label, milestone := text("search"), text("label_name"), text("milestone_title")
	author, assignee := text("author_username"), text("assignee_username")
	sortKey := q.Get("sort")
	base := mergerequest.ListQuery{OrderBy: mergerequest.ByCreated, Search: search, Milestone: milestone}
	if label != "" {
		base.Labels = []string{label}
	}
	found := false
	for _, s := range mrSorts {
		if s.key == sortKey {
			base.OrderBy, base.Ascending, found = s.order, s.asc, true
		}
	}
	if !found {
		sortKey = mrSorts[0].key
	}
	authorID, knownAuthor := pg.userFilter(ctx, author, false)
	assigneeID, knownAssignee := pg.userFilter(ctx, assignee, true)
	base.AuthorID, base.AssigneeID = authorID, assigneeID
	// An unknown user matches nothing: no list is read.
	nothing := !knownAuthor || !knownAssignee
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	filters := map[string]string{"search": search, "label_name": label, "milestone_title": milestone,
		"author_username": author, "assignee_username": assignee}
	link := func(state string, page int) string {
		v := url.Values{}
		v.Set("state", state)
		for k, val := range filters {
			if val != "" {
				v.Set(k, val)
			}
		}
		if sortKey != mrSorts[0].key {
			v.Set("sort", sortKey)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		return pg.site.URL(mrsURL(full, "") + "?" + v.Encode())
	}
	d := listData{Action: pg.site.URL(mrsURL(full, "")), State: state, Search: search, Label: label, Milestone: milestone,
		Author: author, Assignee: assignee, Page: page}
	counts := StateCounts{}
	if !nothing {
		if counts, err = pg.s.Counts(ctx, full, base); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	d.States = stateTabs(counts, state, func(key string) string { return link(key, 1) })
	for _, s := range mrSorts {
		d.Sorts = append(d.Sorts, sortOption{Key: s.key, Label: s.label, Selected: s.key == sortKey})
	}
	var list []mergerequest.MergeRequest
	total := 0
	if !nothing {
		lq := base
		lq.State, lq.Offset, lq.Limit = stateOf(state), (page-1)*mrsPerPage, mrsPerPage
		if list, total, err = pg.s.List(ctx, full, lq); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	d.Total, d.Pages = total, max((total+mrsPerPage-1)/mrsPerPage, 1)
	if d.Rows, err = pg.rows(ctx, info, list); err != nil {
		pg.fail(w, r, err)
		return
	}
	if page > 1 {
		d.PrevHref = link(state, page-1)
	}
	if page < d.Pages {
		d.NextHref = link(state, page+1)
	}
	if auth.FromContext(ctx).User != nil && !info.Archived && info.Level >= int(projects.Developer) {
		d.NewHref = pg.site.URL(mrsURL(full, "/new"))
	}
	d.Empty = "There are no merge requests to show."
	for _, v := range filters {
		if v != "" {
			d.Empty = "No merge requests match these filters."
		}
	}
	pg.t.Render(w, r, "list", web.Page{Title: "Merge requests · " + info.NameWithNamespace, Project: header(info), Tab: "merge_requests",
		Crumbs: []web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(full)}, {Label: "Merge requests"}}, Data: d})
}

// colorPattern is a colour a chip may be drawn in; a label's colour is
// checked against it before it reaches an attribute.
var colorPattern = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}){1,2}$`)

// chips are a merge request's labels (names as the view sorted them),
// each in its colour and linking to the project's list filtered by it;
// seen caches the colours across the rows of a page.
func (pg *mrPages) chips(ctx context.Context, info projects.ProjectInfo, ids []int64, names []string, seen map[int64]target.LabelColor) ([]labelChip, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var missing []int64
	for _, id := range ids {
		if _, ok := seen[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 && pg.s.Labels != nil {
		found, err := pg.s.Labels.Colors(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, id := range missing {
			seen[id] = target.LabelColor{}
		}
		for _, l := range found {
			seen[l.ID] = l
		}
	}
	colorOf := map[string]string{}
	for _, id := range ids {
		if l := seen[id]; l.Name != "" {
			colorOf[l.Name] = l.Color
		}
	}
	out := make([]labelChip, 0, len(names))
	for _, name := range names {
		c := labelChip{Name: name, Color: "#888888",
			Href: pg.site.URL(mrsURL(info.PathWithNamespace, "") + "?" + url.Values{"label_name": {name}}.Encode())}
		if col := colorOf[name]; colorPattern.MatchString(col) {
			c.Color = col
		}
		c.Dark = darkColor(c.Color)
		out = append(out, c)
	}
	return out, nil
}

// darkColor says whether white text reads better than black on c (a
// checked "#rgb" or "#rrggbb"): the one of the two with the higher
// contrast ratio by WCAG's relative luminance, so the chip's text has a
// ratio of at least 4.5 whatever the colour.
func darkColor(c string) bool {
	hex := c[1:]
	if len(hex) == 3 {
		hex = string([]byte{hex[0], hex[0], hex[1], hex[1], hex[2], hex[2]})
	}
	n, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return false
	}
	channel := func(v uint64) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	l := 0.2126*channel(n>>16&0xff) + 0.7152*channel(n>>8&0xff) + 0.0722*channel(n&0xff)
	// Contrast with black (l+0.05)/0.05 against with white 1.05/(l+0.05).
	return (l+0.05)*(l+0.05) < 0.05*1.05
}
