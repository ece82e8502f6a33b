package internal

import (
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
)

// Feature switches and public_jobs, on top of the permission table.
func TestFeatureSwitches(t *testing.T) {
	anon := auth.Anonymous()
	user := &auth.Principal{User: &auth.User{ID: 7, Username: "u"}}
	admin := &auth.Principal{User: &auth.User{ID: 1, Username: "root", Admin: true}}
	member := func(level int) levels { return levels{project: level} }
	base := func(vis string, f func(*Features)) *Project {
		p := &Project{Visibility: vis, Features: Features{IssuesEnabled: true, MergeRequestsEnabled: true,
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
		a    Action
		want bool
	}{
		{"public jobs hidden from anonymous without public_jobs", anon, base(Public, nil), levels{}, ReadJobs, false},
		{"public jobs shown to anonymous with public_jobs", anon, base(Public, func(f *Features) { f.PublicJobs = true }), levels{}, ReadJobs, true},
		{"non-member signed in, public project, no public_jobs", user, base(Public, nil), levels{}, ReadJobs, false},
		{"guest member, private project, public_jobs does not help", user, base(Private, func(f *Features) { f.PublicJobs = true }), member(Guest), ReadJobs, false},
		{"reporter reads jobs", user, base(Private, nil), member(Reporter), ReadJobs, true},
		{"jobs switched off: not even for admins", admin, base(Public, func(f *Features) { f.JobsEnabled = false }), levels{}, ReadJobs, false},
		{"issues switched off: no reading", user, base(Public, func(f *Features) { f.IssuesEnabled = false }), member(Owner), ReadIssues, false},
		{"issues switched off: no creating", user, base(Public, func(f *Features) { f.IssuesEnabled = false }), member(Owner), CreateIssue, false},
		{"anonymous reads public issues", anon, base(Public, nil), levels{}, ReadIssues, true},
		{"anonymous never creates issues", anon, base(Public, nil), levels{}, CreateIssue, false},
		{"merge requests of a public project readable by anyone", anon, base(Public, nil), levels{}, ReadMergeRequests, true},
		{"merge requests switched off", user, base(Public, func(f *Features) { f.MergeRequestsEnabled = false }), member(Master), ReadMergeRequests, false},
		{"private merge requests need Reporter", user, base(Private, nil), member(Guest), ReadMergeRequests, false},
		{"snippets switched off: no creating", user, base(Private, func(f *Features) { f.SnippetsEnabled = false }), member(Master), CreateSnippet, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := allowed(c.p, c.proj, c.l, c.a); got != c.want {
				t.Fatalf("allowed = %v, want %v", got, c.want)
			}
		})
	}
}
