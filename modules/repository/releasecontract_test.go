package repository_test

import (
	"errors"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository/release"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The release contract makes a release as the user in ctx under the
// releases API's rules: the tag made at the ref when missing, the links
// stored, a user who may not push refused with the API's words, an
// existing release refused as ErrExists.
func TestReleaseContract(t *testing.T) {
	t.Parallel()
	var rel release.Service
	var users auth.UserLookup
	s := stocktest.Start(t, fennectest.WithExtract(&rel, &users))
	alice, guest := s.CreateUser(t, "alice"), s.CreateUser(t, "guest")
	p := stocktest.NewProject(t, alice.Client, "shipping", "private")
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.ReporterPermissions)
	c := stocktest.CommitFiles(t, alice.Client, p.ID, "master", "one", map[string]string{"README.md": "one\n"})
	asAlice, asGuest := fennectest.AsUser(t, users, alice.ID), fennectest.AsUser(t, users, guest.ID)
	in := release.Input{TagName: "v1", Description: "first", Ref: "master",
		Links: []release.Link{{Name: "bin", URL: "https://example.com/bin"}}}

	var refused *release.RefusedError
	if _, err := rel.Create(asGuest, p.ID, in); !errors.As(err, &refused) || refused.Reason != "403 Forbidden" {
		t.Fatalf("a reporter's release: %v", err)
	}
	got, err := rel.Create(asAlice, p.ID, in)
	if err != nil || got.TagName != "v1" || got.CommitID != c.ID || got.Links != 1 {
		t.Fatalf("release %+v, %v", got, err)
	}
	r, _, err := alice.Client.Releases.GetRelease(p.ID, "v1")
	if err != nil || r.Description != "first" || len(r.Assets.Links) != 1 || r.Assets.Links[0].LinkType != "other" {
		t.Fatalf("the API's view %+v, %v", r, err)
	}
	if _, err := rel.Create(asAlice, p.ID, in); !errors.Is(err, release.ErrExists) || err.Error() != "Release already exists" {
		t.Errorf("again: %v", err)
	}
	in.TagName, in.Ref = "v2", ""
	if _, err := rel.Create(asAlice, p.ID, in); !errors.As(err, &refused) || refused.Reason != "Ref is not specified" {
		t.Errorf("no ref: %v", err)
	}
}
