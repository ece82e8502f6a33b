package internal

import (
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// Access levels of API-CONVENTIONS.md.
const (
	NoAccess  = 0
	Guest     = 10
	Reporter  = 20
	Developer = 30
	Master    = 40
	Owner     = 50
)

// Visibility levels.
const (
	Private  = "private"
	Internal = "internal"
	Public   = "public"
)

// Action is something a caller may want to do on a project.
type Action int

const (
	ReadProject Action = iota
	ReadCode           // clone, read repository, jobs, pipelines, MRs
	CreateIssue
	CreateSnippet
	PushCode // unprotected branches, MRs, tags, job control
	PushProtected
	AdminProject // settings, hooks, members, protected branches
	ChangeVisibility
	RemoveProject // also archive/unarchive, delete MRs and issues

	// Reads of features that a project may switch off.
	ReadIssues        // issues_enabled
	ReadMergeRequests // merge_requests_enabled
	ReadSnippets      // snippets_enabled
	ReadJobs          // jobs_enabled; non-members also need public_jobs
)

// feature says which switch an action needs (nil: none).
func feature(a Action, f *Features) (needed, on bool) {
	switch a {
	case ReadIssues, CreateIssue:
		return true, f.IssuesEnabled
	case ReadMergeRequests:
		return true, f.MergeRequestsEnabled
	case ReadSnippets, CreateSnippet:
		return true, f.SnippetsEnabled
	case ReadJobs:
		return true, f.JobsEnabled
	}
	return false, true
}

// minLevel is the table of API-CONVENTIONS.md.
var minLevel = map[Action]int{
	ReadProject:       Guest,
	CreateIssue:       Guest,
	ReadCode:          Reporter,
	CreateSnippet:     Reporter,
	PushCode:          Developer,
	PushProtected:     Master,
	AdminProject:      Master,
	ChangeVisibility:  Owner,
	RemoveProject:     Owner,
	ReadIssues:        Guest,
	ReadSnippets:      Guest,
	ReadMergeRequests: Reporter,
	ReadJobs:          Reporter,
}

// writes are refused on archived projects whatever the level.
var writes = map[Action]bool{PushCode: true, PushProtected: true, CreateIssue: true, CreateSnippet: true}

// levels is what one caller has on one project.
type levels struct {
	project int // membership on the project itself (or owner of its namespace)
	group   int // through the group that owns it, or a group it is shared with
}

func (l levels) max() int { return max(l.project, l.group) }

// levelsOf computes the caller's membership levels on p: the personal
// namespace's owner is Owner; project and group memberships count (expired
// ones do not), a group's inherited from the groups above it; a group share gives the lower of the share's level and the
// member's level in the shared group.
func levelsOf(tx *store.Tx, p *auth.Principal, proj *Project, now time.Time) levels {
	var l levels
	if p.IsAnonymous() {
		return l
	}
	uid := uint64(p.UserID())
	if ns, err := namespaces.Get(tx, proj.NamespaceID); err == nil {
		switch ns.Kind {
		case KindUser:
			if ns.OwnerID == uid {
				l.project = Owner
			}
		case KindGroup:
			l.group = groupMemberLevel(tx, ns.ID, uid, now)
		}
	}
	l.project = max(l.project, memberLevel(tx, "project", proj.ID, uid, now))
	for _, s := range proj.SharedWith {
		if s.ExpiresAt != nil && now.After(*s.ExpiresAt) {
			continue
		}
		if m := groupMemberLevel(tx, s.GroupID, uid, now); m > 0 {
			l.group = max(l.group, min(m, s.Access))
		}
	}
	return l
}

func memberLevel(tx *store.Tx, kind string, source, user uint64, now time.Time) int {
	m, err := members.GetBy(tx, "membership", sourceKey(kind, source)+"/"+u64(user))
	if err != nil || (m.ExpiresAt != nil && now.After(*m.ExpiresAt)) {
		return NoAccess
	}
	return m.AccessLevel
}

// canSee: members always; public projects to anyone; internal ones to
// signed-in users who are not external; administrators see everything.
func canSee(p *auth.Principal, proj *Project, l levels) bool {
	switch {
	case p.IsAdmin(), l.max() >= Guest:
		return true
	case proj.Visibility == Public:
		return true
	case proj.Visibility == Internal:
		return !p.IsAnonymous() && !p.User.External
	}
	return false
}

// effectiveLevel is the level used for the action table: administrators act
// as Owner; readers of public/internal projects act as Guest.
func effectiveLevel(p *auth.Principal, proj *Project, l levels) int {
	if p.IsAdmin() {
		return Owner
	}
	lvl := l.max()
	if lvl < Guest && canSee(p, proj, l) {
		lvl = Guest
	}
	return lvl
}

// allowed applies the table, the feature switches and the archive rule.
func allowed(p *auth.Principal, proj *Project, l levels, a Action) bool {
	if !canSee(p, proj, l) {
		return false
	}
	if proj.Archived && writes[a] {
		return false
	}
	if needed, on := feature(a, &proj.Features); needed && !on {
		return false // a switched-off feature is off for everyone
	}
	// Reading the code (and so merge requests) of a public project, or of
	// an internal one as a signed-in user who is not external, needs no
	// membership; jobs too when the project makes them public.
	openCode := proj.Visibility == Public || (proj.Visibility == Internal && !p.IsAnonymous() && !p.User.External)
	// Anonymous callers get public reads only.
	if p.IsAnonymous() {
		switch a {
		case ReadProject, ReadIssues, ReadSnippets:
			return true
		case ReadCode, ReadMergeRequests:
			return openCode
		case ReadJobs:
			return openCode && proj.PublicJobs
		}
		return false
	}
	lvl := effectiveLevel(p, proj, l)
	switch a {
	case ReadCode, ReadMergeRequests:
		if openCode {
			return true
		}
	case ReadJobs:
		if openCode && proj.PublicJobs && l.max() < Reporter {
			return true
		}
	}
	return lvl >= minLevel[a]
}
