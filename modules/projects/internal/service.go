package internal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/netguard"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Service implements the projects module's rules.
type Service struct {
	db    *store.DB
	bus   *events.Bus
	log   *zap.Logger
	users identity.Users
	// accounts finds the users a namespace search matches (namespaces.go).
	accounts identity.AccountLister
	box      *sealed.Box // seals hook tokens and import URLs (secrets.go)
	guard    *netguard.Guard
	now      func() time.Time
	// base is the external URL of the request ctx carries, for web_url
	// and the clone URLs (BaseURL).
	base BaseURL
	// ssh is where git over SSH is served (SetSSHEndpoint), for
	// ssh_url_to_repo; nil until the repository module's server says.
	ssh atomic.Pointer[sshEndpoint]
	// issues counts open issues for open_issues_count (issuecounts.go).
	issues issueCounter
	// branches checks a default_branch an edit names (branchcheck.go).
	branches branchChecker
}

// The contracts the service implements.
var (
	_ project.Access          = (*Service)(nil)
	_ project.Teams           = (*Service)(nil)
	_ project.RepositoryState = (*Service)(nil)
	_ project.RunnersTokens   = (*Service)(nil)
	_ project.Hooks           = (*Service)(nil)
	_ project.SSHEndpoint     = (*Service)(nil)
	_ project.Service         = (*Service)(nil)
)

// BaseURL is the external URL clients reach the server at, as the request
// ctx carries says ("" without a request: background work then gets paths
// without the host, as before). The HTTP adapter gives it (NewBaseURL), so
// the service itself knows no HTTP.
type BaseURL func(ctx context.Context) string

// NewService builds the service.
func NewService(db *store.DB, bus *events.Bus, log *zap.Logger, users identity.Users, accounts identity.AccountLister, box *sealed.Box, cfg config.Config, base BaseURL) *Service {
	return &Service{db: db, bus: bus, log: log, users: users, accounts: accounts, box: box, guard: netguard.New(cfg.AllowLocalRequests), now: time.Now, base: base}
}

// parseRef splits a project's, group's or namespace's :id into a number or
// a path, as the API's router hands it over (URL-decoded): "42" is an id,
// "group/sub/project" a path.
func parseRef(ref string) (id int64, path string) {
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil && n > 0 && !strings.HasPrefix(ref, "+") {
		return n, ""
	}
	return 0, ref
}

// window is the part of list from offset, at most limit long.
func window[T any](list []T, offset, limit int) []T {
	if offset >= len(list) {
		return []T{}
	}
	return list[offset:min(offset+limit, len(list))]
}

var (
	pathRE = regexp.MustCompile(`^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$`)
	nameRE = regexp.MustCompile(`^[\p{L}\p{N}_.\p{So}][\p{L}\p{N}_. +\-\p{So}]*$`)
)

// reservedProjectPaths are the words GitLab routes after a project's path
// (group/project/tree/...): a project called like one would be ambiguous
// as soon as namespaces nest. Top-level names (api, help...) are fine for
// projects; groups and users are checked with identity.ReservedNamespace.
var reservedProjectPaths = map[string]bool{
	"-": true, "badges": true, "blame": true, "blob": true, "builds": true, "commits": true, "create": true,
	"create_dir": true, "edit": true, "files": true, "find_file": true, "new": true, "preview": true, "raw": true,
	"refs": true, "tree": true, "update": true, "wikis": true,
}

// validatePath checks a project path.
func validatePath(v project.FieldErrors, field, path string) {
	checkPath(v, field, path, func(p string) bool { return reservedProjectPaths[strings.ToLower(p)] })
}

// validateGroupPath checks a group path: a top-level namespace, like a
// username.
func validateGroupPath(v project.FieldErrors, field, path string) {
	checkPath(v, field, path, identity.ReservedNamespace)
}

func checkPath(v project.FieldErrors, field, path string, reserved func(string) bool) {
	switch {
	case path == "":
		v[field] = append(v[field], "can't be blank")
	case utf8.RuneCountInString(path) > 255:
		v[field] = append(v[field], "is too long (maximum is 255 characters)")
	case !pathRE.MatchString(path) || strings.HasSuffix(path, ".") || strings.HasSuffix(path, ".git") || strings.HasSuffix(path, ".atom"):
		v[field] = append(v[field], "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.', '.git' or '.atom'")
	case reserved(path):
		v[field] = append(v[field], path+" is a reserved name")
	}
}

func validateName(v project.FieldErrors, name string) {
	switch {
	case strings.TrimSpace(name) == "":
		v["name"] = append(v["name"], "can't be blank")
	case utf8.RuneCountInString(name) > 255:
		v["name"] = append(v["name"], "is too long (maximum is 255 characters)")
	case !nameRE.MatchString(name):
		v["name"] = append(v["name"], "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.")
	}
}

func validVisibility(vis string) bool {
	return vis == project.Private || vis == project.Internal || vis == project.Public
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// userNamespace returns (creating on first use) the personal namespace of a
// user, inside tx.
func userNamespace(tx *store.Tx, userID int64, now time.Time) (*Namespace, error) {
	ns, err := namespaces.GetBy(tx, "owner", store.IDString(userID))
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return ns, err
	}
	ns = &Namespace{Kind: KindUser, OwnerID: userID, CreatedAt: now}
	return ns, namespaces.Insert(tx, ns)
}

// findNamespace finds a namespace by full path: a group's full path, or a user's
// username (the namespace row may not exist yet: then nil, nil).
func (s *Service) findNamespace(tx *store.Tx, path string) (*Namespace, error) {
	if strings.Contains(path, "/") {
		return findGroupByPath(tx, path) // only subgroups nest
	}
	if ns, err := namespaces.GetBy(tx, "path", groupPathKey(0, path)); err == nil {
		return ns, nil
	}
	// The identity module reads in this same transaction (tx.Context()).
	u, err := s.users.UserByUsername(tx.Context(), path)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	ns, err := namespaces.GetBy(tx, "owner", store.IDString(u.ID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, store.ErrNotFound
	}
	return ns, err
}

// resolved is a project with what the caller has on it.
type resolved struct {
	p  *Project
	l  levels
	ni nsInfo
}

// resolve finds a project by number or "namespace/path" and checks that the
// caller may see it; any failure is ErrProjectNotFound, never ErrForbidden.
func (s *Service) resolve(ctx context.Context, ref string) (*resolved, error) {
	pr := auth.FromContext(ctx)
	var r resolved
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if id, path := parseRef(ref); id > 0 {
			r.p, err = projects.Get(tx, id)
		} else {
			i := strings.LastIndex(path, "/")
			if i <= 0 || i == len(path)-1 {
				return store.ErrNotFound
			}
			var ns *Namespace
			if ns, err = s.findNamespace(tx, path[:i]); err != nil {
				return err
			}
			r.p, err = projects.GetBy(tx, "path", projectPathKey(ns.ID, path[i+1:]))
		}
		if err != nil {
			return err
		}
		r.l = levelsOf(tx, pr, r.p, s.now())
		ns, err := namespaces.Get(tx, r.p.NamespaceID)
		if err != nil {
			return err
		}
		r.ni.ns = ns
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !canSee(pr, r.p, r.l) {
		return nil, project.ErrNotFound
	}
	if r.ni, err = s.namespaceInfo(ctx, r.ni.ns); err != nil {
		return nil, err
	}
	return &r, nil
}

// require resolves and checks an action: ErrProjectNotFound when the caller
// cannot see the project, ErrForbidden when they can but may not do this.
func (s *Service) require(ctx context.Context, ref string, a project.Action) (*resolved, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !allowed(auth.FromContext(ctx), r.p, r.l, a) {
		return nil, project.ErrForbidden
	}
	return r, nil
}

// applySwitches sets the switches in gives on dst.
func applySwitches(dst *project.Features, in project.Switches) {
	set := func(d *bool, v *bool) {
		if v != nil {
			*d = *v
		}
	}
	set(&dst.IssuesEnabled, in.IssuesEnabled)
	set(&dst.MergeRequestsEnabled, in.MergeRequestsEnabled)
	set(&dst.JobsEnabled, in.JobsEnabled)
	set(&dst.WikiEnabled, in.WikiEnabled)
	set(&dst.SnippetsEnabled, in.SnippetsEnabled)
	set(&dst.ContainerRegistryEnabled, in.ContainerRegistryEnabled)
	set(&dst.SharedRunnersEnabled, in.SharedRunnersEnabled)
	set(&dst.PublicJobs, in.PublicJobs)
	set(&dst.OnlyAllowMergeIfPipelineSucceeds, in.OnlyAllowMergeIfPipelineSucceeds)
	set(&dst.OnlyAllowMergeIfAllDiscussionsAreResolved, in.OnlyAllowMergeIfAllDiscussionsAreResolved)
	set(&dst.LFSEnabled, in.LFSEnabled)
	set(&dst.RequestAccessEnabled, in.RequestAccessEnabled)
}

// checkImportURL adds import_url's validation errors to v: only http,
// https and git URLs, and (core/netguard) no host that is literally a
// local or private address unless local requests are allowed. A name that
// resolves to one fails when the import connects.
func (s *Service) checkImportURL(v project.FieldErrors, raw string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "git") {
		v.Add("import_url", "is blocked: only http, https and git URLs can be imported")
		return
	}
	if err := s.guard.CheckURL(raw); err != nil {
		v.Add("import_url", "is blocked: "+err.Error())
	}
}

// createOwn makes a project owned by the caller (POST /projects).
func (s *Service) createOwn(ctx context.Context, in project.Fields) (*resolved, error) {
	pr := auth.FromContext(ctx)
	if pr.IsAnonymous() {
		return nil, project.ErrForbidden
	}
	return s.create(ctx, pr.UserID(), in)
}

// createFor makes a project owned by another user, for administrators
// (POST /projects/user/:user_id): a name is needed there.
func (s *Service) createFor(ctx context.Context, owner int64, in project.Fields) (*resolved, error) {
	if !auth.FromContext(ctx).IsAdmin() {
		return nil, project.ErrForbidden
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, project.Params(project.ErrMissing, "name")
	}
	return s.create(ctx, owner, in)
}

// CreateProject makes a project owned by the caller (project.Service).
func (s *Service) CreateProject(ctx context.Context, in project.Fields) (project.Project, error) {
	return s.recordOf(ctx)(s.createOwn(ctx, in))
}

// CreateProjectFor makes a project owned by another user (project.Service).
func (s *Service) CreateProjectFor(ctx context.Context, userID int64, in project.Fields) (project.Project, error) {
	return s.recordOf(ctx)(s.createFor(ctx, userID, in))
}

// create makes a project owned by owner (the caller or, for admins, another
// user) in namespace_id or the owner's personal namespace.
func (s *Service) create(ctx context.Context, owner int64, in project.Fields) (*resolved, error) {
	pr := auth.FromContext(ctx)
	name, path := "", ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	if in.Path != nil {
		path = strings.TrimSpace(*in.Path)
	}
	if name == "" && path == "" {
		return nil, project.Params(project.ErrNothingGiven, "name", "path")
	}
	if path == "" {
		path = slug(name)
	}
	if name == "" {
		name = path
	}
	now := s.now().UTC()
	p := &Project{
		Name: name, Path: path, DefaultBranch: "master", Visibility: project.Private, CreatorID: owner,
		CreatedAt: now, UpdatedAt: now, LastActivityAt: now, TagList: []string{}, RunnersToken: newToken(),
		SharedWith: []Share{},
		Features: project.Features{IssuesEnabled: true, MergeRequestsEnabled: true, JobsEnabled: true, WikiEnabled: true,
			SnippetsEnabled: true, ContainerRegistryEnabled: true, SharedRunnersEnabled: true, PublicJobs: true, LFSEnabled: true},
	}
	v := project.FieldErrors{}
	validateName(v, name)
	validatePath(v, "path", path)
	if in.Description != nil {
		d := *in.Description
		p.Description = &d
	}
	if in.DefaultBranch != nil && strings.TrimSpace(*in.DefaultBranch) != "" {
		p.DefaultBranch = strings.TrimSpace(*in.DefaultBranch)
	}
	if in.Visibility != nil {
		if !validVisibility(*in.Visibility) {
			return nil, project.Params(project.ErrInvalidValue, "visibility")
		}
		p.Visibility = *in.Visibility
	} else {
		settings, err := s.currentSettings(ctx)
		if err != nil {
			return nil, err
		}
		p.Visibility = settings.DefaultProjectVisibility
	}
	if in.TagList != nil {
		p.TagList = append([]string{}, (*in.TagList)...)
	}
	if in.ImportURL != nil && *in.ImportURL != "" {
		s.checkImportURL(v, *in.ImportURL)
		p.ImportURL = s.box.Seal(*in.ImportURL, purposeImportURL)
	}
	applySwitches(&p.Features, in.Switches)
	if len(v) > 0 {
		return nil, v
	}
	ownerInfo, err := s.users.UserByID(ctx, owner)
	if err != nil {
		return nil, project.ErrUserNotFound
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var ns *Namespace
		if in.NamespaceID != nil && *in.NamespaceID > 0 {
			ns, err = namespaces.Get(tx, *in.NamespaceID)
			if errors.Is(err, store.ErrNotFound) {
				return project.ErrNamespaceNotFound
			}
			if err != nil {
				return err
			}
			switch {
			case ns.Kind == KindUser && ns.OwnerID != owner && !pr.IsAdmin():
				return project.ErrNamespaceNotFound
			case ns.Kind == KindGroup && !pr.IsAdmin() && groupMemberLevel(tx, ns.ID, pr.UserID(), s.now()) < project.Master:
				return project.ErrNamespaceNotFound
			}
		} else if ns, err = userNamespace(tx, owner, now); err != nil {
			return err
		}
		if ns.Kind == KindUser && !pr.IsAdmin() {
			ids, err := projects.IDsBy(tx, "namespace", store.IDString(ns.ID))
			if err != nil {
				return err
			}
			if limit := ownerInfo.ProjectsLimit; len(ids) >= limit {
				return project.FieldErrors{"limit_reached": {fmt.Sprintf("Personal project creation is not allowed. Your project limit is %d projects", limit)}}
			}
		}
		p.NamespaceID = ns.ID
		// Report every taken field at once, as GitLab does, not only the
		// first unique index the insert would trip over.
		taken := project.FieldErrors{}
		if _, err := projects.GetBy(tx, "name", store.IDString(ns.ID)+"/"+store.Fold(p.Name)); err == nil {
			taken["name"] = []string{"has already been taken"}
		}
		if _, err := projects.GetBy(tx, "path", projectPathKey(ns.ID, p.Path)); err == nil || subgroupAt(tx, ns.ID, p.Path) {
			taken["path"] = []string{"has already been taken"}
		}
		if len(taken) > 0 {
			return taken
		}
		if err := projects.Insert(tx, p); err != nil {
			return err
		}
		ev := event.ProjectEvent{Action: event.ProjectCreated, ProjectID: p.ID, UserID: pr.UserID()}
		if in.ImportURL != nil && *in.ImportURL != "" {
			// The outbox is in the store too: the event names the source
			// without its credentials; the importer asks ImportURL.
			ev.ImportURL = withoutCredentials(*in.ImportURL)
		}
		return s.bus.Publish(tx, ev)
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return nil, project.FieldErrors{conflict.Index: {"has already been taken"}}
	}
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, store.IDString(p.ID))
}
