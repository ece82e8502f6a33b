package internal

import (
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Feature switches and public_jobs, on top of the permission table.
func TestFeatureSwitches(t *testing.T) {
	anon := auth.Anonymous()
	user := &auth.Principal{User: &auth.User{ID: 7, Username: "u"}}
	admin := &auth.Principal{User: &auth.User{ID: 1, Username: "root", Admin: true}}
	member := func(level int) levels { return levels{project: level} }
	base := func(vis string, f func(*project.Features)) *Project {
		p := &Project{Visibility: vis, Features: project.Features{IssuesEnabled: true, MergeRequestsEnabled: true,
			SnippetsEnabled: true, JobsEnabled: true, PublicJobs: false}}
		if f != nil {
			f(&p.Features)
		}
		return p
	}
	cases := []struct {
		name string
		p    *auth.Principal
		proj *Project
		l    levels
		a    project.Action
		want bool
	}{
		{"public jobs hidden from anonymous without public_jobs", anon, base(project.Public, nil), levels{}, project.ReadJobs, false},
		{"public jobs shown to anonymous with public_jobs", anon, base(project.Public, func(f *project.Features) { f.PublicJobs = true }), levels{}, project.ReadJobs, true},
		{"non-member signed in, public project, no public_jobs", user, base(project.Public, nil), levels{}, project.ReadJobs, false},
		{"guest member, private project, public_jobs does not help", user, base(project.Private, func(f *project.Features) { f.PublicJobs = true }), member(project.Guest), project.ReadJobs, false},
		{"reporter reads jobs", user, base(project.Private, nil), member(project.Reporter), project.ReadJobs, true},
		{"jobs switched off: not even for admins", admin, base(project.Public, func(f *project.Features) { f.JobsEnabled = false }), levels{}, project.ReadJobs, false},
		{"issues switched off: no reading", user, base(project.Public, func(f *project.Features) { f.IssuesEnabled = false }), member(project.Owner), project.ReadIssues, false},
		{"issues switched off: no creating", user, base(project.Public, func(f *project.Features) { f.IssuesEnabled = false }), member(project.Owner), project.CreateIssue, false},
		{"anonymous reads public issues", anon, base(project.Public, nil), levels{}, project.ReadIssues, true},
		{"anonymous never creates issues", anon, base(project.Public, nil), levels{}, project.CreateIssue, false},
		{"merge requests of a public project readable by anyone", anon, base(project.Public, nil), levels{}, project.ReadMergeRequests, true},
		{"merge requests switched off", user, base(project.Public, func(f *project.Features) { f.MergeRequestsEnabled = false }), member(project.Master), project.ReadMergeRequests, false},
		{"private merge requests need Reporter", user, base(project.Private, nil), member(project.Guest), project.ReadMergeRequests, false},
		{"snippets switched off: no creating", user, base(project.Private, func(f *project.Features) { f.SnippetsEnabled = false }), member(project.Master), project.CreateSnippet, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := allowed(c.p, c.proj, c.l, c.a); got != c.want {
				t.Fatalf("allowed = %v, want %v", got, c.want)
			}
		})
	}
}
