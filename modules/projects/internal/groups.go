package internal

import "github.com/fennec-forge/fennec/core/api"

// registerGroups adds groups and group and project members.
func (s *Service) registerGroups(a *api.API) {}
