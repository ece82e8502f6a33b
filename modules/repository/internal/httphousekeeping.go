package internal

// The HTTP adapter of housekeeping.go: routes, request inputs, GitLab views and
// status codes; the service side stays in housekeeping.go.

import (
	"context"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

// HousekeepingRoutesDeps are what NewHousekeepingRoutes is built from.
type HousekeepingRoutesDeps struct {
	fennec.In
	Housekeeper *Housekeeper
	Access      projects.Access
}

// NewHousekeepingRoutes registers POST /projects/:id/housekeeping (GitLab
// 9.0): the repack the housekeeper runs after many pushes, asked for now.
func NewHousekeepingRoutes(d HousekeepingRoutesDeps) fennec.Routes {
	hk, access := d.Housekeeper, d.Access
	return fennec.Routes{Name: "repository-housekeeping", Register: func(a *api.API) {
		api.Register(a, api.Op{ID: "project-housekeeping", Method: http.MethodPost, Path: "/projects/{id}/housekeeping",
			Tags: []string{"projects"}, Summary: "Repack the project's repository (Master)", Access: api.SignedIn},
			func(ctx context.Context, in *struct{ ProjectPath }) (*struct{}, error) {
				// GitLab asks admin_project (Master) of it.
				info, err := access.Require(ctx, in.ID, projects.AdminProject)
				if err != nil {
					return nil, err
				}
				// GitLab answers 409 while its lease on the project's
				// housekeeping is held; here while the repack is queued or
				// running. The repack runs in the background, as
				// GitLab's did (201 at once, no body a client reads: GitLab's
				// is the background job's id).
				queued, err := hk.Request(ctx, info.ID)
				if err != nil {
					return nil, err
				}
				if !queued {
					return nil, api.Conflict("Housekeeping of this project's repository is already queued or running")
				}
				return &struct{}{}, nil
			})
	}}
}
