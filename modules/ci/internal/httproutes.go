package internal

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
)

// NewRoutes registers the module's operations.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "ci", Register: func(a *api.API) {
		s.http.api = a
		mapErrors(a)
		s.registerJobs(a)
		s.registerBridges(a)
		s.registerPipelines(a)
		s.registerTestReports(a)
		s.registerEnvironments(a)
		s.registerVariables(a)
		s.registerGroupVariables(a)
		s.registerRunnerDownloads(a)
		s.registerRunnerAPI(a)
		s.registerRunners(a)
		s.registerArtifactFiles(a)
		s.registerLint(a)
		s.registerTriggers(a)
		s.registerSchedules(a)
	}}
}

// httpState is what the HTTP adapter keeps on the service: the API its
// routes are registered with (the runner API's raw handlers write their
// errors through it).
type httpState struct {
	api *api.API
}

// NewServer gives the service what it knows of the server, from the API.
func NewServer(a *api.API) Server { return apiServer{a} }

type apiServer struct{ *api.API }

// APIURL implements Server.
func (a apiServer) APIURL() string { return a.ExternalURL() + api.Prefix }
