package internal

import (
	"context"
	"testing"

	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Records written before sealing (a hook token and an import_url in clear)
// are read as they are, and migration 2 seals them in place.
func TestLegacySecretsAreSealed(t *testing.T) {
	w := newAccWorld(t)
	box, err := sealed.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const token, importURL = "legacy-hook-token", "https://bob:legacy-pass@git.example.com/x.git"
	ns := w.namespace(&Namespace{Path: "team", Name: "Team", Kind: KindGroup})
	p := w.project(ns, "old", project.Private, func(p *Project) { p.ImportURL = importURL })
	h := &Hook{ProjectID: p.ID, URL: "https://ci.example.com/h", Token: token}
	w.update(func(tx *store.Tx) error { return hooks.Insert(tx, h) })

	s := &Service{db: w.db, box: box}
	if got, err := s.ImportURL(context.Background(), p.ID); err != nil || got != importURL {
		t.Fatalf("a plain import_url before the migration: %q %v", got, err)
	}

	w.update(func(tx *store.Tx) error { return Migrations(box)[1].Up(tx) })
	w.update(func(tx *store.Tx) error { return Migrations(box)[1].Up(tx) }) // idempotent
	var gotHook *Hook
	var gotProject *Project
	_ = w.db.View(context.Background(), func(tx *store.Tx) error {
		gotHook, _ = hooks.Get(tx, h.ID)
		gotProject, _ = projects.Get(tx, p.ID)
		return nil
	})
	if !sealed.IsSealed(gotHook.Token) || !sealed.IsSealed(gotProject.ImportURL) {
		t.Fatalf("not sealed: %q %q", gotHook.Token, gotProject.ImportURL)
	}
	if got, err := box.Unseal(gotHook.Token, project.HookTokenPurpose); err != nil || got != token {
		t.Fatalf("hook token: %q %v", got, err)
	}
	if got, err := s.ImportURL(context.Background(), p.ID); err != nil || got != importURL {
		t.Fatalf("import_url after the migration: %q %v", got, err)
	}
	if got, err := s.ImportURL(context.Background(), 999); err != nil || got != "" {
		t.Fatalf("a project that is gone: %q %v", got, err)
	}
}
