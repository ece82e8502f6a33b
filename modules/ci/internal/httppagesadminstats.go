package internal

import (
	"context"
	"strconv"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/web"
)

// NewAdminStats adds the runners to the admin area's overview: how many
// are registered and how many were seen within the last hour (online, as
// the runners API's scope says). The overview is only for administrators
// (web.Site.Admin), so the count is not filtered by the caller.
func NewAdminStats(s *Service) fennec.Pages {
	return fennec.Pages{Name: "ci-admin-stats", Register: func(site *web.Site) {
		site.AddAdminStats(30, func(ctx context.Context) []web.Stat {
			all, err := s.allRunners(ctx)
			if err != nil {
				return []web.Stat{{Group: web.StatsCounts, Label: "Runners", Value: "?", Problem: true}}
			}
			online := 0
			for _, r := range all {
				if r.online() {
					online++
				}
			}
			return []web.Stat{
				{Group: web.StatsCounts, Label: "Runners", Value: strconv.Itoa(len(all))},
				{Group: web.StatsCounts, Label: "Runners online", Value: strconv.Itoa(online)},
			}
		})
	}}
}
