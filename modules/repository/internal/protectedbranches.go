package internal

// Protected branches: the protected branches API of GitLab 9.x
// (/projects/:id/protected_branches, with push and merge access levels and
// wildcard names such as release-*) and the older protect and unprotect
// endpoints of .../repository/branches/:branch are two doors to one table,
// repository.protected_branches, so that both views agree. Every check of a
// branch (pushes over HTTP and SSH, the API's writes, merges, the branch
// views, CI's protected pipelines) asks protection(), which combines the
// branch's own protection with every wildcard one that matches it.

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Access levels of a protection (GitLab 9.x's ProtectedRefAccess).
const (
	levelNoOne     = 0  // nobody, administrators included
	levelDeveloper = 30 // developers and masters
	levelMaster    = 40 // masters (and administrators)
)

// levelDescription is GitLab 9.x's access_level_description of a
// role-based level.
func levelDescription(level int) string {
	switch level {
	case levelNoOne:
		return "No one"
	case levelDeveloper:
		return "Developers + Masters"
	}
	return "Masters"
}

// level turns the stored flags into a level. The flags are what the older
// endpoint wrote (developers_can_push and developers_can_merge); "no one"
// came with the access levels and is a flag of its own, so records written
// before it read as before.
func level(developers, noOne bool) int {
	switch {
	case developers:
		return levelDeveloper
	case noOne:
		return levelNoOne
	}
	return levelMaster
}

// PushLevel and MergeLevel are the protection's access levels.
func (p *Protection) PushLevel() int  { return level(p.DevelopersCanPush, p.NoOneCanPush) }
func (p *Protection) MergeLevel() int { return level(p.DevelopersCanMerge, p.NoOneCanMerge) }

// setLevels stores the levels (validated by the caller).
func (p *Protection) setLevels(push, merge int) {
	p.DevelopersCanPush, p.NoOneCanPush = push == levelDeveloper, push == levelNoOne
	p.DevelopersCanMerge, p.NoOneCanMerge = merge == levelDeveloper, merge == levelNoOne
}

// allows says whether a level lets the caller through; master (asked only
// when it matters) is whether they may push to protected branches.
func allows(lvl int, master func() bool) bool {
	switch lvl {
	case levelNoOne:
		return false
	case levelDeveloper:
		return true
	}
	return master()
}

// allowsPush says whether a caller may push to a branch of protection p
// (nil: not protected; the caller is already known to be a developer).
func (p *Protection) allowsPush(master func() bool) bool {
	return p == nil || allows(p.PushLevel(), master)
}

// allowsMerge says whether a caller may merge into such a branch: as in
// GitLab, the right to push to it is enough too.
func (p *Protection) allowsMerge(master func() bool) bool {
	return p == nil || allows(p.MergeLevel(), master) || allows(p.PushLevel(), master)
}

// protects says whether a protection named pattern covers branch: its own
// name, or a wildcard name whose "*" stand for any text, "/" included (as
// GitLab's wildcard protected branches match).
func protects(pattern, branch string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == branch
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(branch, parts[0]) {
		return false
	}
	rest := branch[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}

// protectionIn is the protection that applies to branch: nil when none
// covers it, else the combination of all that do, the most permissive level
// winning for push and for merge, as GitLab decides when several rules
// match a branch.
func protectionIn(tx *store.Tx, project int64, branch string) (*Protection, error) {
	ids, err := protections.IDsBy(tx, "project", store.IDString(project))
	if err != nil {
		return nil, err
	}
	var eff *Protection
	for _, id := range ids {
		p, err := protections.Get(tx, id)
		if err != nil {
			return nil, err
		}
		if !protects(p.Name, branch) {
			continue
		}
		if eff == nil {
			c := *p
			c.Name = branch
			eff = &c
			continue
		}
		eff.DevelopersCanPush = eff.DevelopersCanPush || p.DevelopersCanPush
		eff.NoOneCanPush = eff.NoOneCanPush && p.NoOneCanPush
		eff.DevelopersCanMerge = eff.DevelopersCanMerge || p.DevelopersCanMerge
		eff.NoOneCanMerge = eff.NoOneCanMerge && p.NoOneCanMerge
	}
	return eff, nil
}

// mayPushBranch says whether the caller may write to branch through the API
// (commits, files, cherry-picks, reverts); ref names the project for the
// access check. The caller is already known to be a developer.
func (w *Writer) mayPushBranch(ctx context.Context, project int64, ref, branch string) (bool, error) {
	p, err := w.protection(ctx, project, branch)
	if err != nil {
		return false, err
	}
	return p.allowsPush(func() bool { ok, _ := w.rd.access.Can(ctx, ref, projects.PushProtected); return ok }), nil
}

// AccessLevelView is one access level of a protected branch.
type AccessLevelView struct {
	AccessLevel            int    `json:"access_level"`
	AccessLevelDescription string `json:"access_level_description"`
}

// ProtectedBranchView is GitLab 9.x's protected branch resource (no id:
// 9.x showed none, and python-gitlab names it by name).
type ProtectedBranchView struct {
	Name              string            `json:"name"`
	PushAccessLevels  []AccessLevelView `json:"push_access_levels"`
	MergeAccessLevels []AccessLevelView `json:"merge_access_levels"`
}

func protectedBranchView(p *Protection) ProtectedBranchView {
	return ProtectedBranchView{
		Name:              p.Name,
		PushAccessLevels:  []AccessLevelView{{p.PushLevel(), levelDescription(p.PushLevel())}},
		MergeAccessLevels: []AccessLevelView{{p.MergeLevel(), levelDescription(p.MergeLevel())}},
	}
}

// errProtectionNotFound: no protection of that name. GitLab 9.x answers it
// with its RecordNotFound 404, lower-case "found" (mapped in mapErrors).
var errProtectionNotFound = errors.New("repository: protected branch not found")

// accessLevel validates an optional level; absent is masters.
func accessLevel(param string, v *int) (int, error) {
	if v == nil {
		return levelMaster, nil
	}
	switch *v {
	case levelNoOne, levelDeveloper, levelMaster:
		return *v, nil
	}
	return 0, notValidValue(param)
}

// Protections are the project's protected branches and wildcards, oldest
// first, as the caller in ctx, who must administer the project (the list
// tells who may push where), with the project as they see it.
func (w *Writer) Protections(ctx context.Context, project string) ([]*Protection, projects.ProjectInfo, error) {
	info, err := w.rd.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return nil, info, err
	}
	var all []*Protection
	err = w.db.View(ctx, func(tx *store.Tx) error {
		ids, err := protections.IDsBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			p, err := protections.Get(tx, id)
			if err != nil {
				return err
			}
			all = append(all, p)
		}
		return nil
	})
	if err != nil {
		return nil, info, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, info, nil
}

// CreateProtection protects a branch or a wildcard (which need not match
// a branch yet) with push and merge levels (nil: masters), as the caller
// in ctx, who must administer the project.
func (w *Writer) CreateProtection(ctx context.Context, project, name string, pushLevel, mergeLevel *int) (*Protection, error) {
	info, err := w.rd.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	push, err := accessLevel("push_access_level", pushLevel)
	if err != nil {
		return nil, err
	}
	merge, err := accessLevel("merge_access_level", mergeLevel)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		return nil, errProtectionNameBlank
	}
	p := &Protection{ProjectID: info.ID, Name: name}
	p.setLevels(push, merge)
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := protections.GetBy(tx, "branch", refKey(p.ProjectID, name)); err == nil {
			return &protectionExistsError{name}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return protections.Insert(tx, p)
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		err = &protectionExistsError{name}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// DeleteProtection unprotects the branch or wildcard name, as the caller
// in ctx, who must administer the project.
func (w *Writer) DeleteProtection(ctx context.Context, project, name string) error {
	info, err := w.rd.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return err
	}
	return w.db.Update(ctx, func(tx *store.Tx) error {
		p, err := protections.GetBy(tx, "branch", refKey(info.ID, name))
		if errors.Is(err, store.ErrNotFound) {
			return errProtectionNotFound
		}
		if err != nil {
			return err
		}
		return protections.Delete(tx, p.ID)
	})
}
