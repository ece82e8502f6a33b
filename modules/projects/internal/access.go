package internal

import (
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// feature says which switch an action needs (nil: none).
func feature(a project.Action, f *project.Features) (needed, on bool) {
	switch a {
	case project.ReadIssues, project.CreateIssue:
		return true, f.IssuesEnabled
	case project.ReadMergeRequests:
		return true, f.MergeRequestsEnabled
	case project.ReadSnippets, project.CreateSnippet:
		return true, f.SnippetsEnabled
	case project.ReadJobs:
		return true, f.JobsEnabled
	}
	return false, true
}

// minLevel is the table of API-CONVENTIONS.md.
var minLevel = map[project.Action]int{
	project.ReadProject:       project.Guest,
	project.CreateIssue:       project.Guest,
	project.ReadCode:          project.Reporter,
	project.CreateSnippet:     project.Reporter,
	project.PushCode:          project.Developer,
	project.PushProtected:     project.Master,
	project.AdminProject:      project.Master,
	project.ChangeVisibility:  project.Owner,
	project.RemoveProject:     project.Owner,
	project.ReadIssues:        project.Guest,
	project.ReadSnippets:      project.Guest,
	project.ReadMergeRequests: project.Reporter,
	project.ReadJobs:          project.Reporter,
}

// writes are refused on archived projects whatever the level.
var writes = map[project.Action]bool{project.PushCode: true, project.PushProtected: true, project.CreateIssue: true, project.CreateSnippet: true}

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
	uid := p.UserID()
	if ns, err := namespaces.Get(tx, proj.NamespaceID); err == nil {
		switch ns.Kind {
		case KindUser:
			if ns.OwnerID == uid {
				l.project = project.Owner
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

func memberLevel(tx *store.Tx, kind string, source, user int64, now time.Time) int {
	m, err := members.GetBy(tx, "membership", sourceKey(kind, source)+"/"+store.IDString(user))
	if err != nil || (m.ExpiresAt != nil && now.After(*m.ExpiresAt)) {
		return project.NoAccess
	}
	return m.AccessLevel
}

// canSee: members always; public projects to anyone; internal ones to
// signed-in users who are not external; administrators see everything.
func canSee(p *auth.Principal, proj *Project, l levels) bool {
	switch {
	case p.IsAdmin(), l.max() >= project.Guest:
		return true
	case proj.Visibility == project.Public:
		return true
	case proj.Visibility == project.Internal:
		return !p.IsAnonymous() && !p.User.External
	}
	return false
}

// effectiveLevel is the level used for the action table: administrators act
// as Owner; readers of public/internal projects act as Guest.
func effectiveLevel(p *auth.Principal, proj *Project, l levels) int {
	if p.IsAdmin() {
		return project.Owner
	}
	lvl := l.max()
	if lvl < project.Guest && canSee(p, proj, l) {
		lvl = project.Guest
	}
	return lvl
}

// allowed applies the table, the feature switches and the archive rule.
func allowed(p *auth.Principal, proj *Project, l levels, a project.Action) bool {
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
	openCode := proj.Visibility == project.Public || (proj.Visibility == project.Internal && !p.IsAnonymous() && !p.User.External)
	// Anonymous callers get public reads only.
	if p.IsAnonymous() {
		switch a {
		case project.ReadProject, project.ReadIssues, project.ReadSnippets:
			return true
		case project.ReadCode, project.ReadMergeRequests:
			return openCode
		case project.ReadJobs:
			return openCode && proj.PublicJobs
		}
		return false
	}
	lvl := effectiveLevel(p, proj, l)
	switch a {
	case project.ReadCode, project.ReadMergeRequests:
		if openCode {
			return true
		}
	case project.ReadJobs:
		if openCode && proj.PublicJobs && l.max() < project.Reporter {
			return true
		}
	}
	return lvl >= minLevel[a]
}

// validLevel says whether level is one of the access levels, at most
// highest (Master for a project's members, Owner for a group's).
func validLevel(level, highest int) bool {
	switch level {
	case project.Guest, project.Reporter, project.Developer, project.Master, project.Owner:
		return level <= highest
	}
	return false
}
