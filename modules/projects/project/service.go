package project

import (
	"context"
	"time"
)

// Service is the projects module's commands: what a page, an admin command
// or an embedder's Go code does to projects, groups, members and shares,
// exactly as the API does it. The caller is the principal in ctx; a
// project (or group) the caller may not see is ErrNotFound
// (ErrGroupNotFound), one they see but may not change ErrForbidden. A
// project is named as the API's :id names it (ref: its id or its full
// path), a group likewise. Every command is one store transaction with its
// events.
type Service interface {
	// Projects.

	// CreateProject makes a project owned by the caller, in
	// in.NamespaceID (a group the caller is Master of, or their own) or
	// their personal namespace. A name or a path is needed (each defaults
	// to the other).
	CreateProject(ctx context.Context, in Fields) (Project, error)
	// CreateProjectFor makes a project owned by another user
	// (administrators only); it needs a name.
	CreateProjectFor(ctx context.Context, userID int64, in Fields) (Project, error)
	// UpdateProject changes what in gives (Master; the visibility Owner);
	// at least one field. A default branch the repository does not have
	// is ignored, as GitLab 9.x does.
	UpdateProject(ctx context.Context, ref string, in Fields) (Project, error)
	// DeleteProject deletes the project with its memberships and stars
	// (Owner); a ProjectEvent "deleted" tells the other modules to drop
	// what they keep of it.
	DeleteProject(ctx context.Context, ref string) error
	// ArchiveProject and UnarchiveProject (Owner) are idempotent.
	ArchiveProject(ctx context.Context, ref string) (Project, error)
	UnarchiveProject(ctx context.Context, ref string) (Project, error)
	// ForkProject copies the project (the caller needs ReadCode) into a
	// namespace the caller may create projects in, by default their own;
	// the repository follows on the "forked" event.
	ForkProject(ctx context.Context, ref string, in ForkFields) (Project, error)
	// TransferProject moves the project (Owner) to another namespace (its
	// id or path) the caller may create projects in.
	TransferProject(ctx context.Context, ref, namespace string) (Project, error)
	// StarProject and UnstarProject star or unstar the project for the
	// caller; ErrUnchanged when it already was (or was not) starred.
	StarProject(ctx context.Context, ref string) (Project, error)
	UnstarProject(ctx context.Context, ref string) (Project, error)
	// ShareProject shares the project (Master) with a group the caller
	// may see; UnshareProject stops it (ErrShareNotFound when it was not).
	ShareProject(ctx context.Context, ref string, in ShareFields) (Share, error)
	UnshareProject(ctx context.Context, ref string, groupID int64) error

	// Groups.

	// CreateGroup makes a group (a subgroup when in.ParentID is set: Master
	// of the parent) whose Owner is the caller; it needs a name and a path.
	CreateGroup(ctx context.Context, in GroupFields) (Group, error)
	// UpdateGroup changes what in gives (Owner); at least one field.
	// Groups are not moved: a ParentID must name the current parent.
	UpdateGroup(ctx context.Context, ref string, in GroupFields) (Group, error)
	// DeleteGroup deletes the group (Owner) with its subgroups, their
	// projects (each announced deleted) and memberships.
	DeleteGroup(ctx context.Context, ref string) error

	// Members of a project (kind ProjectMembers) or a group (GroupMembers),
	// named by ref. Masters manage a project's members, Owners a group's;
	// anyone may leave.

	// AddMember gives in.UserID in.AccessLevel (both needed).
	AddMember(ctx context.Context, kind MemberKind, ref string, in MemberFields) (Member, error)
	// UpdateMember changes a member's level (needed) and expiry.
	UpdateMember(ctx context.Context, kind MemberKind, ref string, userID int64, in MemberFields) (Member, error)
	// RemoveMember removes a member; a group keeps an Owner (ErrLastOwner).
	RemoveMember(ctx context.Context, kind MemberKind, ref string, userID int64) error

	// Project hooks (Master).

	AddHook(ctx context.Context, ref string, in HookFields) (Hook, error)
	UpdateHook(ctx context.Context, ref string, hookID int64, in HookFields) (Hook, error)
	DeleteHook(ctx context.Context, ref string, hookID int64) error
}

// Fields are what a project's create or update gives; nil is "not given".
type Fields struct {
	Name        *string
	Path        *string
	NamespaceID *int64 // create only
	// DefaultBranch: on update, a branch the repository has.
	DefaultBranch *string
	Description   *string
	Visibility    *string // Private, Internal or Public
	// ImportURL: an http, https or git URL to import the repository from
	// (credentials allowed; they are kept sealed).
	ImportURL *string
	TagList   *[]string
	Switches
}

// Switches are the Features a create or an update sets; nil is "not
// given" (a create's defaults: all on but the merge checks and request
// access).
type Switches struct {
	IssuesEnabled                             *bool
	MergeRequestsEnabled                      *bool
	JobsEnabled                               *bool
	WikiEnabled                               *bool
	SnippetsEnabled                           *bool
	ContainerRegistryEnabled                  *bool
	SharedRunnersEnabled                      *bool
	PublicJobs                                *bool
	OnlyAllowMergeIfPipelineSucceeds          *bool
	OnlyAllowMergeIfAllDiscussionsAreResolved *bool
	LFSEnabled                                *bool
	RequestAccessEnabled                      *bool
}

// ForkFields say where a fork goes and what it is called; nil is "not
// given". The namespace is NamespaceID, else NamespacePath, else Namespace
// (an id or a path), else the caller's own; the name and path default to
// the source's.
type ForkFields struct {
	Namespace     *string
	NamespaceID   *int64
	NamespacePath *string
	Name          *string
	Path          *string
}

// ShareFields are a share's group, the highest level its members get
// through it, and when it ends (a date, YYYY-MM-DD; nil or "": never).
type ShareFields struct {
	GroupID     int64
	GroupAccess int
	ExpiresAt   *string
}

// GroupFields are what a group's create or update gives; nil is "not
// given".
type GroupFields struct {
	Name        *string
	Path        *string
	Description *string
	Visibility  *string
	// LFSEnabled and RequestAccessEnabled are accepted and ignored: groups
	// show the instance defaults.
	LFSEnabled           *bool
	RequestAccessEnabled *bool
	// ParentID makes a new group a subgroup (0: top level); on update it
	// may only name the current parent.
	ParentID *int64
}

// MemberKind says whose members a member command is about.
type MemberKind string

const (
	ProjectMembers MemberKind = "project"
	GroupMembers   MemberKind = "group"
)

// MemberFields are a member's user (add only), level (Guest to Master for
// a project, to Owner for a group) and expiry: a date, YYYY-MM-DD, in the
// future (the membership ends when that day begins, UTC); "" on update
// removes the expiry.
type MemberFields struct {
	UserID      *int64
	AccessLevel *int
	ExpiresAt   *string
}

// HookFields are a project hook's settings: the URL (needed) and, nil
// being "not given", the token and the switches (a new hook has push
// events and SSL verification on, the rest off).
type HookFields struct {
	URL                   string
	Token                 *string
	PushEvents            *bool
	IssuesEvents          *bool
	MergeRequestsEvents   *bool
	TagPushEvents         *bool
	NoteEvents            *bool
	JobEvents             *bool
	PipelineEvents        *bool
	WikiPageEvents        *bool
	EnableSSLVerification *bool
}

// Project is a project as a command returns it: what Access tells of it
// (as the caller sees it) and the rest of its record.
type Project struct {
	Info
	TagList        []string
	CreatorID      int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	LastActivityAt time.Time
	StarCount      int
	ForksCount     int
	// ImportStatus is one of the Import states; ImportError the message
	// of a failed import.
	ImportStatus string
	ImportError  string
	SharedWith   []Share
}

// Share is a project shared with a group: its members get at most
// GroupAccess on the project, until ExpiresAt (nil: no end).
type Share struct {
	ProjectID   int64
	GroupID     int64
	GroupAccess int
	ExpiresAt   *time.Time
}

// Group is a group as a command returns it. FullPath and FullName start
// with its ancestors'; ParentID is a subgroup's parent (0: top level).
type Group struct {
	ID          int64
	ParentID    int64
	Name        string
	Path        string
	FullName    string
	FullPath    string
	Description string
	Visibility  string
	CreatedAt   time.Time
}

// Member is a user's membership of a project or a group.
type Member struct {
	Kind        MemberKind
	SourceID    int64 // the project's or the group's id
	UserID      int64
	AccessLevel int
	ExpiresAt   *time.Time // nil: no end
	CreatedAt   time.Time
}
