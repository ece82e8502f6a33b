package internal

// The history pages (commits, commit, compare, branches, tags, releases)
// are registered here; this placeholder keeps the build whole until they
// land (NewPages, httppages.go, calls it).

import "github.com/fennec-forge/fennec/core/web"

func (pg *pages) registerHistoryPages(s *web.Site) {}
