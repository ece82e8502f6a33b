package snippet

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/modules/collab/target"
)

// ID is a snippet's id. Project and personal snippets share one sequence,
// so an id names one snippet of either kind.
type ID int64

// NoteableType is the noteable_type of notes on project snippets.
const NoteableType = "Snippet"

// Visibility is who may see a snippet, in the projects' words. A project
// snippet is never more visible than its project.
type Visibility string

const (
	Private  Visibility = "private"
	Internal Visibility = "internal" // signed-in users who are not external
	Public   Visibility = "public"
)

// Valid says whether v is one of the three visibilities.
func (v Visibility) Valid() bool { return v == Private || v == Internal || v == Public }

// Snippet is a snippet as the Service returns it: a project snippet when
// ProjectID is set, a personal one otherwise. Its content is read apart
// (ProjectSnippetContent, PersonalSnippetContent).
type Snippet struct {
	ID          ID
	ProjectID   int64 // 0 for a personal snippet
	AuthorID    int64
	Title       string
	FileName    string
	Description *string // nil when none was ever given
	Visibility  Visibility
	Size        int // of the content, in bytes
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// WebURL is a project snippet's page, under its project's web_url
	// as the projects module gives it. A personal snippet's page is under
	// the server's external URL, which the transport knows: "" here.
	WebURL string
}

// Personal says whether the snippet belongs to no project.
func (s Snippet) Personal() bool { return s.ProjectID == 0 }

// Fields are what a create or an update gives; nil is "not given". A
// create needs the title, the file name, the content and, for a project
// snippet, the visibility (a personal one is Internal unless given); an
// update needs any one of them.
type Fields struct {
	Title       *string
	FileName    *string
	Content     *string // at most 1 MiB of UTF-8 text
	Description *string
	Visibility  *Visibility
}

// Service is the snippets module. The caller is the principal in ctx; a
// snippet the caller may not see is ErrNotFound, as one that is not there.
// Lists are newest first: limit of them from the offset-th on, and how
// many there are in all.
type Service interface {
	// Project snippets. project is a project as the API's :id gives it
	// (its id or its full path); a project the caller may not read, or
	// whose snippets feature is off, is the projects module's error.

	// ProjectSnippets are the project's snippets the caller may see.
	ProjectSnippets(ctx context.Context, project string, offset, limit int) ([]Snippet, int, error)
	ProjectSnippet(ctx context.Context, project string, id ID) (Snippet, error)
	// ProjectSnippetContent is the snippet and its content.
	ProjectSnippetContent(ctx context.Context, project string, id ID) (Snippet, []byte, error)
	// CreateProjectSnippet: Reporter or above, not on an archived project.
	CreateProjectSnippet(ctx context.Context, project string, in Fields) (Snippet, error)
	// UpdateProjectSnippet: the author or a Master, not on an archived
	// project (projects.ErrForbidden).
	UpdateProjectSnippet(ctx context.Context, project string, id ID, in Fields) (Snippet, error)
	// DeleteProjectSnippet deletes the snippet with its notes and returns
	// it; nil when there is none the caller sees (deleting twice is no
	// error). Who may is who may update.
	DeleteProjectSnippet(ctx context.Context, project string, id ID) (*Snippet, error)

	// Personal snippets, for signed-in callers.

	// OwnSnippets are the caller's personal snippets.
	OwnSnippets(ctx context.Context, offset, limit int) ([]Snippet, int, error)
	// PublicSnippets are every public personal snippet.
	PublicSnippets(ctx context.Context, offset, limit int) ([]Snippet, int, error)
	PersonalSnippet(ctx context.Context, id ID) (Snippet, error)
	PersonalSnippetContent(ctx context.Context, id ID) (Snippet, []byte, error)
	// CreatePersonalSnippet: anyone signed in but external users
	// (projects.ErrForbidden).
	CreatePersonalSnippet(ctx context.Context, in Fields) (Snippet, error)
	// UpdatePersonalSnippet and DeletePersonalSnippet: the author or an
	// administrator (projects.ErrForbidden).
	UpdatePersonalSnippet(ctx context.Context, id ID, in Fields) (Snippet, error)
	DeletePersonalSnippet(ctx context.Context, id ID) error
}

var (
	// ErrNotFound: no such snippet, or one the caller may not see (the two
	// are never told apart). It is a noteable's not-found
	// (target.ErrNotFound) for the modules that know no owner.
	ErrNotFound = target.NotFound("snippets: snippet not found")
	// ErrMissing: a create lacks required fields (a *ParamsError names
	// them).
	ErrMissing = errors.New("snippets: required fields missing")
	// ErrNothingGiven: an update gives no field (a *ParamsError names
	// those it may give).
	ErrNothingGiven = errors.New("snippets: an update gives no field")
	// ErrInvalidVisibility: a visibility that is not one of the three.
	ErrInvalidVisibility = errors.New("snippets: visibility is not private, internal or public")
	// ErrInvalid: fields whose values a snippet may not have (an
	// *InvalidError says which and why).
	ErrInvalid = errors.New("snippets: invalid fields")
)

// ParamsError is ErrMissing or ErrNothingGiven with the parameters it is
// about, named as GitLab's API names them (a project snippet's content is
// its code, a personal snippet's its content).
type ParamsError struct {
	Err    error
	Params []string
}

func (e *ParamsError) Error() string { return e.Err.Error() + ": " + strings.Join(e.Params, ", ") }
func (e *ParamsError) Unwrap() error { return e.Err }

// InvalidError is ErrInvalid with every problem at once: field ("title",
// "file_name", "content", "description") -> what is wrong with it.
type InvalidError struct {
	Fields map[string][]string
}

func (e *InvalidError) Error() string {
	names := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		names = append(names, f)
	}
	slices.Sort(names)
	return ErrInvalid.Error() + ": " + strings.Join(names, ", ")
}
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Add appends a problem with field.
func (e *InvalidError) Add(field, text string) {
	if e.Fields == nil {
		e.Fields = map[string][]string{}
	}
	e.Fields[field] = append(e.Fields[field], text)
}
