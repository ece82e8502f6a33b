package internal

// Secrets the module keeps but never shows: a hook's token (the webhooks
// module sends it back in X-Gitlab-Token, so it cannot be hashed) and the
// credentials of a project's import_url (the repository module clones with
// them). Both are sealed with core/sealed before they reach the store; the
// key lives outside it. Records from before sealing are sealed by migration
// 2 and, until then, read as they are.

import (
	"context"
	"errors"
	"net/url"

	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// purposeImportURL is what import URLs are sealed for; hook tokens are
// sealed for project.HookTokenPurpose, so one cannot pass for the other.
const purposeImportURL = "projects.import_url"

// withoutCredentials is rawURL with any user and password removed: what an
// event may carry and a log may show.
func withoutCredentials(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	u.User = nil
	return u.String()
}

// ImportURL returns the import_url of a project as it was given, with its
// credentials, for the repository module's import; "" when the project has
// none (or is gone).
func (s *Service) ImportURL(ctx context.Context, projectID int64) (string, error) {
	var sealedURL string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, projectID)
		if err != nil {
			return err
		}
		sealedURL = p.ImportURL
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return s.box.Unseal(sealedURL, purposeImportURL)
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations(box *sealed.Box) []store.Migration {
	return []store.Migration{
		{Module: "projects", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
		{Module: "projects", Version: 2, Name: "seal hook tokens and import_url", Up: func(tx *store.Tx) error {
			return sealExisting(tx, box)
		}},
		{Module: "projects", Version: 3, Name: "index projects by runners_token", Up: func(tx *store.Tx) error {
			return projects.Reindex(tx, "runners_token")
		}},
		{Module: "projects", Version: 4, Name: "index projects by forked_from", Up: func(tx *store.Tx) error {
			return projects.Reindex(tx, "forked_from")
		}},
		{Module: "projects", Version: 5, Name: "search index of projects", Up: func(tx *store.Tx) error {
			return projects.Reindex(tx, "search")
		}},
		{Module: "projects", Version: 6, Name: "search index of groups", Up: func(tx *store.Tx) error {
			return namespaces.Reindex(tx, "search")
		}},
	}
}

// sealExisting seals the hook tokens and import URLs stored in clear.
func sealExisting(tx *store.Tx, box *sealed.Box) error {
	var plainHooks []*Hook
	if err := hooks.Scan(tx, false, 0, func(h *Hook) (bool, error) {
		if h.Token != "" && !sealed.IsSealed(h.Token) {
			plainHooks = append(plainHooks, h)
		}
		return true, nil
	}); err != nil {
		return err
	}
	for _, h := range plainHooks {
		h.Token = box.Seal(h.Token, project.HookTokenPurpose)
		if err := hooks.Update(tx, h); err != nil {
			return err
		}
	}
	var plainProjects []*Project
	if err := projects.Scan(tx, false, 0, func(p *Project) (bool, error) {
		if p.ImportURL != "" && !sealed.IsSealed(p.ImportURL) {
			plainProjects = append(plainProjects, p)
		}
		return true, nil
	}); err != nil {
		return err
	}
	for _, p := range plainProjects {
		p.ImportURL = box.Seal(p.ImportURL, purposeImportURL)
		if err := projects.Update(tx, p); err != nil {
			return err
		}
	}
	return nil
}
