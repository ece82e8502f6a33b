// Package event is the contract of the events the projects module publishes
// (through the core/events outbox). It is a public package of its own, not
// internal/, so the contract is defined where other modules can read it, and
// apart from the module's root package only because that one imports
// internal/ (Module()) and internal/ publishes these types: Go forbids the
// cycle. The root package re-exports every name here.
//
// The payloads are persisted in the outbox, so their JSON is frozen: rename
// nothing, add fields only with omitempty, and keep old actions decoding.
package event

// ProjectAction says what happened to a project.
type ProjectAction string

// The actions of ProjectEvent.
const (
	ProjectCreated    ProjectAction = "created"
	ProjectUpdated    ProjectAction = "updated"
	ProjectForked     ProjectAction = "forked"
	ProjectDeleted    ProjectAction = "deleted"
	ProjectArchived   ProjectAction = "archived"
	ProjectUnarchived ProjectAction = "unarchived"
)

// ProjectEvent is published when a project is created, updated, forked,
// archived, unarchived or deleted; Action says which.
type ProjectEvent struct {
	Action    ProjectAction `json:"action"`
	ProjectID int64         `json:"project_id"`
	UserID    int64         `json:"user_id"`
	// ImportURL is set when the project was created with an import_url:
	// that URL without its credentials (the whole one is
	// projects.RepositoryState.ImportURL's).
	ImportURL string `json:"import_url,omitempty"`
	// ForkedFromID is set on forks: the repository module copies its data.
	ForkedFromID int64 `json:"forked_from_id,omitempty"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (ProjectEvent) EventTopic() string { return "projects.project" }

// MemberAction says whether a member came or went.
type MemberAction string

// The actions of MemberEvent.
const (
	MemberJoined MemberAction = "joined"
	MemberLeft   MemberAction = "left"
)

// MemberEvent is published when a user joins or leaves a project or group;
// ProjectID or GroupID says where.
type MemberEvent struct {
	Action    MemberAction `json:"action"`
	ProjectID int64        `json:"project_id,omitempty"`
	GroupID   int64        `json:"group_id,omitempty"`
	UserID    int64        `json:"user_id"`   // the member
	AuthorID  int64        `json:"author_id"` // who made the change
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (MemberEvent) EventTopic() string { return "projects.member" }

// GroupAction says what happened to a group.
type GroupAction string

// The actions of GroupEvent.
const (
	GroupDeleted GroupAction = "deleted"
)

// GroupEvent is published when a group is deleted, once per group (its
// subgroups each get their own, children first), in the transaction that
// deletes it, so modules that keep data per group (labels, milestones, CI
// variables) drop it with the group.
type GroupEvent struct {
	Action  GroupAction `json:"action"`
	GroupID int64       `json:"group_id"`
	UserID  int64       `json:"user_id"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (GroupEvent) EventTopic() string { return "projects.group" }
