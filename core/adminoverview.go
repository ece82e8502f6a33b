package fennec

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
)

// outboxStaleAfter is how old the oldest undelivered event may grow before
// the overview flags the outbox: delivery normally follows the commit
// within a second, and retries back off for minutes at most.
const outboxStaleAfter = 15 * time.Minute

// registerAdminOverview serves the admin area's overview with the core's
// own figures: the version, what GET /-/readiness reports (the store's
// probe, the parts that start in the background such as executors) and
// the outbox's backlog. The modules add their counts (web.AddAdminStats).
func registerAdminOverview(site *web.Site, a *api.API, db *store.DB, bus *events.Bus) {
	site.ServeAdminOverview()
	site.AddAdminStats(0, func(ctx context.Context) []web.Stat {
		v, rev := Version()
		stats := []web.Stat{
			{Group: web.StatsHealth, Label: "Version", Value: v},
			{Group: web.StatsHealth, Label: "Revision", Value: rev},
		}
		probeCtx, cancel := context.WithTimeout(ctx, readinessStoreDeadline)
		defer cancel()
		storeState := web.Stat{Group: web.StatsHealth, Label: "Store", Value: "ok"}
		if err := db.Probe(probeCtx); err != nil {
			storeState.Value, storeState.Problem = "not answering", true
		}
		ready := web.Stat{Group: web.StatsHealth, Label: "Readiness", Value: "ready"}
		if !a.Ready() {
			ready.Value, ready.Problem = "not ready", true
		}
		stats = append(stats, storeState, ready, outboxStat(ctx, bus))
		return append(stats, readinessStats(a.ReadinessReports())...)
	})
}

// outboxStat is the outbox's backlog: how many events wait for a
// subscriber, and for how long the oldest has.
func outboxStat(ctx context.Context, bus *events.Bus) web.Stat {
	st := web.Stat{Group: web.StatsHealth, Label: "Outbox backlog"}
	n, oldest, err := bus.Backlog(ctx)
	switch {
	case err != nil:
		st.Value, st.Problem = "unreadable", true
	case n == 0:
		st.Value = "empty"
	default:
		age := time.Since(oldest).Round(time.Second)
		st.Value = fmt.Sprintf("%s, the oldest %s old", web.Plural(n, "event"), age)
		st.Problem = age > outboxStaleAfter
	}
	return st
}

// readinessStats turns the parts GET /-/readiness reports beside its
// status into figures. A report is any JSON value; a list of parts with
// a name and a status (the executors) reads "name: status" each, and a
// status other than "ok" or "starting" is a problem.
func readinessStats(reports map[string]any) []web.Stat {
	names := make([]string, 0, len(reports))
	for name := range reports {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []web.Stat
	for _, name := range names {
		raw, err := json.Marshal(reports[name])
		if err != nil || name == "" {
			continue
		}
		label := strings.ToUpper(name[:1]) + name[1:]
		var parts []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			out = append(out, web.Stat{Group: web.StatsHealth, Label: label, Value: string(raw)})
			continue
		}
		if len(parts) == 0 {
			out = append(out, web.Stat{Group: web.StatsHealth, Label: label, Value: "none"})
		}
		for _, p := range parts {
			out = append(out, web.Stat{Group: web.StatsHealth, Label: label + " " + p.Name, Value: p.Status,
				Problem: p.Status != "ok" && p.Status != "starting"})
		}
	}
	return out
}
