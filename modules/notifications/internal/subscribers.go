package internal

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	cievent "github.com/fennec-forge/fennec/modules/ci/event"
	noteevent "github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	issueevent "github.com/fennec-forge/fennec/modules/issues/event"
	mrevent "github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// Subscribers are the event kinds that lead to mail: one line each. Every
// handler turns its event into a notice (or none) and the same code finds
// the recipients and queues the mails, inside the transaction that
// acknowledges the event (SubscribeInTx), so a mail is queued exactly when
// its event is marked handled. events.Only keeps the events that never
// mail (a running pipeline, a system note) out of the outbox.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.SubscribeInTx("notifications.issue", notify(s, s.issueNotice)),
		events.SubscribeInTx("notifications.merge_request", notify(s, s.mergeRequestNotice)),
		events.Only(events.SubscribeInTx("notifications.note", notify(s, s.noteNotice)),
			func(ev noteevent.NoteEvent) bool { return ev.Action == noteevent.NoteCreated && !ev.System }),
		events.Only(events.SubscribeInTx("notifications.pipeline", notify(s, s.pipelineNotice)),
			func(ev cievent.PipelineEvent) bool { return ev.Status == "failed" || ev.Status == "success" }),
		events.Only(events.SubscribeInTx("notifications.user_created", notify(s, s.userCreatedNotice)),
			func(ev identity.UserCreated) bool { return ev.ResetPassword }),
		events.SubscribeInTx("notifications.password_reset", notify(s, s.passwordResetNotice)),
		events.SubscribeInTx("notifications.commit_comment", notify(s, s.commitNoteNotice)),
		// Settings of a deleted user or project go with them.
		events.SubscribeInTx("notifications.user_deleted", func(ctx context.Context, ev identity.UserDeleted) error {
			return s.dropSettings(ctx, "user", store.IDString(ev.UserID))
		}),
		events.Only(events.SubscribeInTx("notifications.project_deleted", func(ctx context.Context, ev projects.ProjectEvent) error {
			return s.dropSettings(ctx, "source", sourceKey(SourceProject, ev.ProjectID))
		}), func(ev projects.ProjectEvent) bool { return ev.Action == projects.ProjectDeleted }),
	}
}

// notify adapts an event kind's notice builder into a handler.
func notify[E events.Event](s *Service, build func(ctx context.Context, ev E) (*notice, error)) func(context.Context, E) error {
	return func(ctx context.Context, ev E) error {
		n, err := build(ctx, ev)
		for ; err == nil && n != nil; n = n.Next {
			err = s.queue(ctx, n)
		}
		return err
	}
}

// notice is one event worth mail, whatever its kind.
type notice struct {
	// Key identifies the event ("issue:12:close:<updated_at>"): a second
	// delivery of it queues nothing.
	Key string
	// Event is the custom level's switch for it ("close_issue").
	Event     string
	ProjectID int64
	ActorID   int64
	// Target is the issue or merge request (Type "Pipeline" for a
	// pipeline, which has no participants).
	Target target.Noteable
	// Mentioned are the usernames the event's own text mentions (a new
	// issue's description, a note): they get mail at the mention level.
	Mentioned []string
	// Direct are users who get the mail whatever their level but disabled
	// (the old and new assignees of a reassignment).
	Direct []int64
	// To, when set, are the recipients, whoever they are (account mails
	// outside any project); no level applies.
	To []recipient
	// OnlyMentioned: the mail goes to the users in Mentioned alone (new
	// mentions in an edited description).
	OnlyMentioned bool
	// Next is a second notice of the same event (an edit that reassigns
	// and mentions someone new).
	Next *notice `json:"-"`
	// Participants, for a commit's comment (Target.Type "Commit"), are the
	// commit's: its author and earlier commenters (the collab module keeps
	// those of issues and merge requests).
	Participants []int64 `json:",omitempty"`
	// OnlyActor: the mail goes to the actor alone, if their level wants it
	// (pipelines, as GitLab mails a pipeline's result to its author).
	OnlyActor bool
	// The mail.
	content
}

func (s *Service) systemCtx(ctx context.Context) context.Context {
	return auth.WithPrincipal(ctx, auth.System())
}

// issueNotice: opened, closed, reopened, and updates that change the
// assignees (reassign_issue); other updates mail nothing.
func (s *Service) issueNotice(ctx context.Context, ev issueevent.IssueEvent) (*notice, error) {
	i := ev.Issue
	t := target.Noteable{Type: "Issue", ID: i.ID, IID: i.IID, ProjectID: ev.ProjectID, Title: i.Title, AuthorID: i.AuthorID,
		AssigneeIDs: i.AssigneeIDs, Confidential: i.Confidential, WebURL: i.URL}
	return s.targetNotice(ctx, t, string(ev.Action), ev.UserID, i.Description, i.UpdatedAt.UnixNano(), "issue")
}

func (s *Service) mergeRequestNotice(ctx context.Context, ev mrevent.MergeRequestEvent) (*notice, error) {
	m := ev.MergeRequest
	var assignees []int64
	if m.AssigneeID > 0 {
		assignees = []int64{m.AssigneeID}
	}
	t := target.Noteable{Type: "MergeRequest", ID: m.ID, IID: m.IID, ProjectID: ev.ProjectID, Title: m.Title, AuthorID: m.AuthorID,
		AssigneeIDs: assignees, WebURL: m.URL}
	return s.targetNotice(ctx, t, string(ev.Action), ev.UserID, m.Description, m.UpdatedAt.UnixNano(), "merge_request")
}

// targetNotice is the shared part of issues and merge requests: the
// action names are the same ("open", "close", "reopen", "update",
// "merge"), the custom events are <action>_<kind>.
func (s *Service) targetNotice(ctx context.Context, t target.Noteable, action string, actor int64, description string,
	version int64, kind string) (*notice, error) {
	mentioned := mentions(t.Title + "\n" + description)
	seen, err := s.remember(ctx, t, mentioned)
	if err != nil {
		return nil, err
	}
	key := kind + ":" + store.IDString(t.ID) + ":" + action + ":" + strconv.FormatInt(version, 10)
	var first *notice
	add := func(n *notice) {
		n.ProjectID, n.ActorID, n.Target = t.ProjectID, actor, t
		n.Next, first = first, n
	}
	switch action {
	case "open":
		add(&notice{Key: key, Event: "new_" + kind, Mentioned: mentioned})
	case "close", "reopen", "merge":
		add(&notice{Key: key, Event: action + "_" + kind})
	case "update":
		if seen == nil {
			break // the first time the module sees it: nothing to compare
		}
		if !sameSet(seen.Assignees, t.AssigneeIDs) {
			add(&notice{Key: key, Event: "reassign_" + kind, Direct: append(slices.Clone(seen.Assignees), t.AssigneeIDs...)})
		}
		var fresh []string
		for _, name := range mentioned {
			if !slices.Contains(seen.Mentions, strings.ToLower(name)) {
				fresh = append(fresh, name)
			}
		}
		if len(fresh) > 0 {
			add(&notice{Key: key + ":mention", Mentioned: fresh, OnlyMentioned: true})
		}
	}
	if first == nil {
		return nil, nil
	}
	p, err := s.access.ResolveID(s.systemCtx(ctx), t.ProjectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil // gone meanwhile
	}
	if err != nil {
		return nil, err
	}
	actorName := s.userName(ctx, actor)
	var previous []int64
	if seen != nil {
		previous = seen.Assignees
	}
	for n := first; n != nil; n = n.Next {
		event := n.Event
		if n.OnlyMentioned {
			event = "mention_" + kind
		}
		n.content = s.targetContent(ctx, p, t, event, actorName, description, previous, n.Key)
	}
	return first, nil
}

// remember stores t's assignees and mentions and returns what was stored
// before (nil the first time the module sees t).
func (s *Service) remember(ctx context.Context, t target.Noteable, mentioned []string) (*Target, error) {
	key := t.Type + ":" + store.IDString(t.ID)
	lower := make([]string, len(mentioned))
	for i, name := range mentioned {
		lower[i] = strings.ToLower(name)
	}
	var seen *Target
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		row, err := targets.GetBy(tx, "key", key)
		if errors.Is(err, store.ErrNotFound) {
			return targets.Insert(tx, &Target{Key: key, Assignees: t.AssigneeIDs, Mentions: lower})
		}
		if err != nil {
			return err
		}
		before := *row
		seen = &before
		row.Assignees, row.Mentions = t.AssigneeIDs, lower
		return targets.Update(tx, row)
	})
	return seen, err
}

func sameSet(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// noteNotice: a new comment on an issue or a merge request.
func (s *Service) noteNotice(ctx context.Context, ev noteevent.NoteEvent) (*notice, error) {
	if ev.NoteableType != "Issue" && ev.NoteableType != "MergeRequest" {
		return nil, nil
	}
	sys := s.systemCtx(ctx)
	p, err := s.access.ResolveID(sys, ev.ProjectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := s.collab.Resolve(sys, ev.NoteableType, p, ev.NoteableIID)
	if err != nil {
		// The noteable went with its project or was deleted, or its
		// feature was switched off since (the server may read anything
		// else), or its module is not in the bundle: nobody to tell.
		// Anything else is retried.
		if isNotFound(err) || errors.Is(err, projects.ErrForbidden) || errors.Is(err, target.ErrUnknownKind) {
			return nil, nil
		}
		return nil, err
	}
	n := &notice{Key: "note:" + store.IDString(ev.NoteID), Event: "new_note", ProjectID: ev.ProjectID, ActorID: ev.AuthorID, Target: t,
		Mentioned: mentions(ev.Body)}
	n.content = s.noteContent(p, t, ev, s.userName(ctx, ev.AuthorID))
	return n, nil
}

// commitNoteNotice: a comment on a commit (new_note). Its participants
// are the commit's author, when a user has the author's address, and who
// commented on it before; the mentioned and the watchers as for any
// comment. Readers of the code may be told.
func (s *Service) commitNoteNotice(ctx context.Context, ev repository.CommitCommented) (*notice, error) {
	p, err := s.access.ResolveID(s.systemCtx(ctx), ev.ProjectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	title, authorEmail := ev.SHA, ""
	if c, err := s.repos.Commit(s.systemCtx(ctx), ev.ProjectID, ev.SHA); err == nil {
		title, authorEmail = c.Title(), c.Author.Email
	}
	t := target.Noteable{Type: "Commit", ProjectID: ev.ProjectID, Title: title, WebURL: p.WebURL + "/commit/" + ev.SHA}
	if authorEmail != "" {
		u, err := s.emails.UserByEmail(ctx, authorEmail)
		switch {
		case err == nil:
			t.AuthorID = u.ID
		case !errors.Is(err, identity.ErrUserNotFound):
			return nil, err
		}
	}
	before, err := s.rememberCommenter(ctx, "Commit:"+store.IDString(ev.ProjectID)+":"+ev.SHA, ev.AuthorID)
	if err != nil {
		return nil, err
	}
	n := &notice{Key: "commit_note:" + store.IDString(ev.CommentID), Event: "new_note", ProjectID: ev.ProjectID, ActorID: ev.AuthorID,
		Target: t, Mentioned: mentions(ev.Note), Participants: append(before, t.AuthorID)}
	n.content = s.commitNoteContent(p, t, ev, s.userName(ctx, ev.AuthorID))
	return n, nil
}

// rememberCommenter adds user to the commenters of a commit and returns
// those before.
func (s *Service) rememberCommenter(ctx context.Context, key string, user int64) ([]int64, error) {
	var before []int64
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		row, err := targets.GetBy(tx, "key", key)
		if errors.Is(err, store.ErrNotFound) {
			return targets.Insert(tx, &Target{Key: key, Commenters: []int64{user}})
		}
		if err != nil {
			return err
		}
		before = slices.Clone(row.Commenters)
		if slices.Contains(row.Commenters, user) {
			return nil
		}
		row.Commenters = append(row.Commenters, user)
		return targets.Update(tx, row)
	})
	return before, err
}

func firstLine(message string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	return strings.TrimSpace(line)
}

// isNotFound: the owning module's not-found error of a noteable
// (target.ErrNotFound matches every owner's), or a row gone from the store.
func isNotFound(err error) bool {
	return errors.Is(err, target.ErrNotFound) || errors.Is(err, store.ErrNotFound)
}

// pipelineNotice: a pipeline that failed or succeeded, for its author.
func (s *Service) pipelineNotice(ctx context.Context, ev cievent.PipelineEvent) (*notice, error) {
	event := "success_pipeline"
	if ev.Status == "failed" {
		event = "failed_pipeline"
	}
	if ev.UserID <= 0 {
		return nil, nil
	}
	p, err := s.access.ResolveID(s.systemCtx(ctx), ev.ProjectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	n := &notice{Key: "pipeline:" + store.IDString(ev.PipelineID) + ":" + ev.Status, Event: event, ProjectID: ev.ProjectID,
		ActorID: ev.UserID, OnlyActor: true, Target: target.Noteable{Type: "Pipeline", ID: ev.PipelineID, ProjectID: ev.ProjectID}}
	n.content = s.pipelineContent(p, ev)
	return n, nil
}

// userCreatedNotice: the account an administrator created with
// reset_password gets a link to choose its password.
func (s *Service) userCreatedNotice(ctx context.Context, ev identity.UserCreated) (*notice, error) {
	if ev.Email == "" {
		return nil, nil
	}
	token, expires, err := s.resets.NewPasswordResetToken(ctx, ev.UserID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, nil // deleted meanwhile
	}
	if err != nil {
		return nil, err
	}
	n := &notice{Key: "user_created:" + store.IDString(ev.UserID), To: []recipient{{UserID: ev.UserID, Email: ev.Email}}}
	n.content = s.accountContent(ev, token, expires)
	return n, nil
}

// passwordResetNotice: someone asked for a reset link on the "forgot your
// password" page; the account's primary address gets it. The token is made
// here, in the transaction that queues the mail, so it exists exactly when
// its mail does (and replaces the one of an earlier link).
func (s *Service) passwordResetNotice(ctx context.Context, ev identity.PasswordResetRequested) (*notice, error) {
	if ev.Email == "" {
		return nil, nil
	}
	token, expires, err := s.resets.NewPasswordResetToken(ctx, ev.UserID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, nil // deleted meanwhile
	}
	if err != nil {
		return nil, err
	}
	n := &notice{Key: "password_reset:" + store.IDString(ev.UserID) + ":" + store.IDString(ev.RequestedAt.UnixNano()),
		To: []recipient{{UserID: ev.UserID, Email: ev.Email}}}
	n.content = s.resetContent(ev, token, expires)
	return n, nil
}

// dropSettings deletes the settings rows an index key names; a second
// run finds none.
func (s *Service) dropSettings(ctx context.Context, index, key string) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := settings.DeleteBy(tx, index, key)
		return err
	})
}

func (s *Service) userName(ctx context.Context, id int64) string {
	if u, err := s.users.UserByID(ctx, id); err == nil {
		return u.Name
	}
	return "Someone"
}
