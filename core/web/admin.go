package web

import (
	"context"
	"net/http"
	"slices"

	"github.com/fennec-forge/fennec/core/auth"
)

// The admin area's overview (/admin) shows figures that belong to several
// modules (the identity module's users, the projects module's projects and
// groups, the CI module's runners) beside the core's own (version, store,
// outbox, executors). Each adds a StatsFunc with AddAdminStats; the page
// asks them all, in order, on every visit, so a StatsFunc must be cheap
// (a count the store keeps, not a scan of every record).

// Stat is one figure of the admin overview.
type Stat struct {
	// Group is the overview's box the figure goes in: StatsCounts or
	// StatsHealth.
	Group string
	Label string
	Value string
	// Href, when set, is the page the figure leads to, under the site's
	// root ("/admin/users").
	Href string
	// Problem marks a figure that needs an administrator's attention (an
	// unreachable store, a failed executor): it is shown as such.
	Problem bool
}

// The overview's boxes.
const (
	StatsCounts = "Counts"
	StatsHealth = "Health"
)

// StatsFunc returns a module's figures for the overview, asked as the
// administrator who looks at it (auth.FromContext(ctx)).
type StatsFunc func(ctx context.Context) []Stat

type adminStats struct {
	order int
	f     StatsFunc
}

// AddAdminStats adds figures to the admin overview; order places them
// among the others (lower first).
func (s *Site) AddAdminStats(order int, f StatsFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = append(s.stats, adminStats{order: order, f: f})
	slices.SortStableFunc(s.stats, func(a, b adminStats) int { return a.order - b.order })
}

// statBox is one box of the overview page.
type statBox struct {
	Title string
	Stats []Stat
}

// ServeAdminOverview serves the admin area's overview at /admin, with its
// entry in the header's menu (administrators only) and in the area's
// navigation. The core calls it once, beside its own figures.
func (s *Site) ServeAdminOverview() {
	s.AddMenu(MenuItem{Label: "Admin", Path: "/admin", Order: 100, Admin: true})
	s.AddSection(Section{Area: AreaAdmin, Key: "overview", Label: "Overview", Path: "/admin", Order: 10})
	s.Admin("GET /admin", func(w http.ResponseWriter, r *http.Request) {
		s.mu.RLock()
		funcs := slices.Clone(s.stats)
		s.mu.RUnlock()
		boxes := []statBox{{Title: StatsCounts}, {Title: StatsHealth}}
		for _, st := range funcs {
			for _, x := range st.f(r.Context()) {
				i := slices.IndexFunc(boxes, func(b statBox) bool { return b.Title == x.Group })
				if i < 0 {
					boxes = append(boxes, statBox{Title: x.Group})
					i = len(boxes) - 1
				}
				boxes[i].Stats = append(boxes[i].Stats, x)
			}
		}
		boxes = slices.DeleteFunc(boxes, func(b statBox) bool { return len(b.Stats) == 0 })
		s.core.Render(w, r, "admin_overview", Page{Title: "Admin area", Area: AreaAdmin, Section: "overview",
			Data: boxes})
	})
}

// Impersonating is the administrator whose session acts as the visitor,
// nil when nobody impersonates (auth.Principal.Impersonator).
func Impersonating(ctx context.Context) *auth.User {
	return auth.FromContext(ctx).Impersonator
}
