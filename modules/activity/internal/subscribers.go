package internal

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
	"github.com/fennec-forge/fennec/modules/repository"
)

// Subscribers are the module's event handlers. Delivery is at least once;
// each handler says how it stays harmless when an event comes twice.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		// Every handler here only writes feed rows: the bus runs them in
		// its own transaction, a batch of events per commit; but for
		// onProject, which removes a deleted project's entries a step
		// at a time.
		// Only the actions onProject records: an edit (the most frequent
		// project write) then puts nothing in the outbox at all.
		events.Only(events.Subscribe("activity.project", s.onProject), func(ev projects.ProjectEvent) bool {
			switch ev.Action {
			case projects.ProjectCreated, projects.ProjectForked, projects.ProjectDeleted:
				return true
			}
			return false
		}),
		events.SubscribeInTx("activity.member", s.onMember),
		events.Subscribe("activity.user-deleted", s.onUserDeleted),
		events.SubscribeInTx("activity.record", s.onRecord),
		events.SubscribeInTx("activity.push", s.onPush),
	}
}

// onPush records a ref change as GitLab's feed does: "pushed new" for a new
// ref, "deleted" for a removed one, "pushed to" otherwise, with the push in
// data. The key (project, ref, before, after) makes a redelivery harmless.
func (s *Service) onPush(ctx context.Context, ev repository.PushEvent) error {
	action := feed.PushedTo
	switch {
	case ev.Created():
		action = feed.PushedNew
	case ev.Deleted():
		action = feed.Deleted
	}
	userName := ""
	if u, err := s.users.UserByID(ctx, ev.UserID); err == nil {
		userName = u.Name
	}
	data, err := json.Marshal(map[string]any{
		"before": ev.Before, "after": ev.After, "ref": ev.Ref, "user_id": ev.UserID, "user_name": userName,
		"repository": ev.Repository, "commits": ev.Commits, "total_commits_count": ev.TotalCommitsCount,
	})
	if err != nil {
		return err
	}
	return s.onRecord(ctx, feed.Event{ProjectID: ev.ProjectID, AuthorID: ev.UserID, ActionName: action, Data: data,
		Key: "push:" + strconv.FormatInt(ev.ProjectID, 10) + ":" + ev.Ref + ":" + ev.Before + ":" + ev.After})
}

// onProject records created (forks too: a fork is a project its author
// created), and on deleted removes every entry of the project and leaves a
// "deleted" tombstone in the author's own feed. Other actions (updated,
// archived, unarchived) have no feed entry: GitLab 9.x recorded none for
// them (its event service has no call for a project edit).
//
// created and deleted happen once per project, so their entries carry a
// key and a redelivery adds nothing.
func (s *Service) onProject(ctx context.Context, ev projects.ProjectEvent) error {
	pid, author := ev.ProjectID, ev.UserID
	if pid == 0 {
		return nil
	}
	now := s.now().UTC()
	switch ev.Action {
	case projects.ProjectCreated, projects.ProjectForked:
		return s.db.Update(ctx, func(tx *store.Tx) error {
			_, err := insert(tx, &Entry{ProjectID: pid, AuthorID: author, ActionName: string(feed.Created),
				Key: "projects.created:" + store.IDString(pid), CreatedAt: now})
			return err
		})
	case projects.ProjectDeleted:
		// A deleted author (the projects module deletes a deleted user's
		// projects) gets no tombstone: nobody could see it.
		_, err := s.users.UserByID(ctx, ev.UserID)
		tombstone := err == nil && author != 0
		if err != nil && !errors.Is(err, identity.ErrUserNotFound) {
			return err
		}
		// removeStep entries per transaction: a project's many thousands
		// removed in one kept every other writer of the server waiting
		// for seconds. The project is marked gone first, so that no
		// late event adds to what is being removed; a call cut short
		// is made again by the outbox and goes on from what is left.
		return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
			if err := goneProjects.Put(tx, store.Key(pid), []byte{}); err != nil {
				return false, err
			}
			ids, err := entries.FirstIDsBy(tx, "project", store.IDString(pid), removeStep)
			if err != nil {
				return false, err
			}
			for _, id := range ids {
				e, err := entries.Get(tx, id)
				if err != nil {
					return false, err
				}
				if err := remove(tx, e); err != nil {
					return false, err
				}
			}
			if len(ids) > 0 {
				return false, nil
			}
			if err := removeProject(tx, pid); err != nil || !tombstone {
				return err == nil, err
			}
			_, err = insert(tx, &Entry{AuthorID: author, ActionName: string(feed.Deleted), TargetID: pid, TargetType: "Project",
				Key: "projects.deleted:" + store.IDString(pid), CreatedAt: now})
			return err == nil, err
		})
	}
	return nil
}

// onMember records joined and left for project memberships (group ones
// have no project feed to go to). Membership alternates, so a redelivered
// event is recognised: the member's newest membership entry in the project
// already has the same action.
func (s *Service) onMember(ctx context.Context, ev projects.MemberEvent) error {
	if ev.ProjectID == 0 || ev.UserID == 0 || (ev.Action != projects.MemberJoined && ev.Action != projects.MemberLeft) {
		return nil
	}
	pid, member := ev.ProjectID, ev.UserID
	return s.db.Update(ctx, func(tx *store.Tx) error {
		last, err := lastInProject(tx, member, pid, 1000, func(e *Entry) bool {
			return e.ActionName == string(feed.Joined) || e.ActionName == string(feed.Left)
		})
		if err != nil || (last != nil && last.ActionName == string(ev.Action)) {
			return err
		}
		// The member is the author, as in GitLab: "alice joined project X".
		_, err = insert(tx, &Entry{ProjectID: pid, AuthorID: member, ActionName: string(ev.Action), CreatedAt: s.now().UTC()})
		return err
	})
}

// onUserDeleted removes what a deleted user authored; removing twice
// changes nothing.
func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) error {
	// removeStep entries per transaction, as onProject does: a busy
	// user's feed is many thousands of entries.
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		items := authorItems(tx, ev.UserID)
		items = items[:min(len(items), removeStep)]
		for _, it := range items {
			e, err := entries.Get(tx, it.entry)
			if err != nil {
				return false, err
			}
			if err := remove(tx, e); err != nil {
				return false, err
			}
		}
		return len(items) < removeStep, nil
	})
}

// onRecord stores an entry another module asked for; its Key makes a
// redelivery harmless.
func (s *Service) onRecord(ctx context.Context, r feed.Event) error {
	if r.AuthorID <= 0 || r.ActionName == "" || r.ProjectID < 0 {
		s.log.Warn("activity: dropping an incomplete record", zap.String("action", string(r.ActionName)), zap.Int64("author", r.AuthorID))
		return nil
	}
	e := &Entry{ProjectID: r.ProjectID, AuthorID: r.AuthorID, ActionName: string(r.ActionName),
		TargetType: r.TargetType, TargetTitle: r.TargetTitle, TargetIID: r.TargetIID, Title: r.Title, Data: r.Data, Note: r.Note,
		Key: r.Key, CreatedAt: s.now().UTC()}
	if r.TargetID > 0 {
		e.TargetID = r.TargetID
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := insert(tx, e)
		return err
	})
}

// removeStep is how many entries one transaction of onProject or
// onUserDeleted removes.
const removeStep = 500
