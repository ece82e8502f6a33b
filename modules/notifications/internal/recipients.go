package internal

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// mentions is the collab module's reading of @mentions.
func mentions(text string) []string { return target.Mentions(text) }

// recipient is one address to mail.
type recipient struct {
	UserID int64
	Email  string
}

// reasons says why a user is considered. subscribed and unsubscribed are
// the user's explicit choice on the target (the subscribe and unsubscribe
// endpoints), which outweighs every level.
type reasons struct {
	participant, mentioned, direct bool
	subscribed, unsubscribed       bool
}

// queue stores n for the sender, in the transaction of ctx (the event's
// acknowledgement). A notice whose key is already pending or queued adds
// nothing.
func (s *Service) queue(ctx context.Context, n *notice) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := notices.GetBy(tx, "key", n.Key); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if _, err := mails.GetBy(tx, "key", n.Key); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		tx.OnCommit(s.Kick)
		return notices.Insert(tx, &PendingNotice{Key: n.Key, Notice: *n})
	})
}

// expandBatch is how many pending notices one pass reads.
const expandBatch = 20

// expand turns the pending notices into mails and deliveries: the
// recipients are worked out in a read transaction, then one write stores
// the mail, its deliveries and deletes the notice. A notice that fails is
// logged and left for the next pass.
func (s *Service) expand(ctx context.Context) {
	var after int64
	for ctx.Err() == nil {
		var batch []*PendingNotice
		err := s.db.View(ctx, func(tx *store.Tx) error {
			return notices.Scan(tx, false, 0, func(p *PendingNotice) (bool, error) {
				if p.ID > after {
					batch = append(batch, p)
				}
				return len(batch) < expandBatch, nil
			})
		})
		if err != nil || len(batch) == 0 {
			if err != nil && ctx.Err() == nil {
				s.log.Error("notifications: reading pending notices failed", zap.Error(err))
			}
			return
		}
		after = batch[len(batch)-1].ID
		for _, p := range batch {
			if err := s.expandOne(ctx, p); err != nil && ctx.Err() == nil {
				s.log.Error("notifications: working out a mail's recipients failed; will retry",
					zap.String("key", p.Key), zap.Error(err))
			}
		}
	}
}

func (s *Service) expandOne(ctx context.Context, p *PendingNotice) error {
	n := &p.Notice
	list := n.To
	if list == nil {
		err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			list, err = s.recipients(tx.Context(), tx, n)
			return err
		})
		if err != nil {
			return err
		}
	}
	text, html, err := render(&n.content)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if !notices.Exists(tx, p.ID) {
			return nil
		}
		if err := notices.Delete(tx, p.ID); err != nil {
			return err
		}
		if len(list) == 0 {
			return nil
		}
		m := &Mail{Key: n.Key, Subject: n.Subject, Text: text, HTML: html, MessageID: n.MessageID, InReplyTo: n.InReplyTo,
			Headers: n.Headers, Pending: len(list), CreatedAt: s.now().UTC()}
		if err := mails.Insert(tx, m); err != nil {
			return err
		}
		for _, r := range list {
			payload, err := json.Marshal(&queuedMail{MailID: m.ID, UserID: r.UserID, To: r.Email})
			if err != nil {
				return err
			}
			if err := s.mailq.Enqueue(tx, mailKey(r.Email, r.UserID), payload); err != nil {
				return err
			}
		}
		return nil
	})
}

// recipients works out who gets n's mail, as GitLab's notification
// service does: participants (author, assignees, commenters, mentioned,
// subscribers, by the collab module's reckoning), watchers and custom
// levels that chose the event, the users the event mentions or assigns;
// then each one's effective level decides (wants). An explicit subscriber
// of the target gets it whatever their level, one who unsubscribed from it
// never does; and nobody gets it who is blocked, may not see the target,
// or is the actor.
func (s *Service) recipients(ctx context.Context, tx *store.Tx, n *notice) ([]recipient, error) {
	why := map[int64]*reasons{}
	var order []int64
	add := func(id int64, set func(*reasons)) {
		if id <= 0 {
			return
		}
		r, ok := why[id]
		if !ok {
			r = &reasons{}
			why[id] = r
			order = append(order, id)
		}
		set(r)
	}
	groupID, team, err := s.teams.ProjectTeam(ctx, n.ProjectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	projectRows, err := sourceRows(tx, SourceProject, n.ProjectID)
	if err != nil {
		return nil, err
	}
	groupRows := map[int64]*Setting{}
	if groupID > 0 {
		if groupRows, err = sourceRows(tx, SourceGroup, groupID); err != nil {
			return nil, err
		}
	}
	// The collab module keeps the participants and subscriptions of issues
	// and merge requests; a commit's participants come with the notice, and
	// a pipeline (OnlyActor) has none.
	kept := !n.OnlyActor && n.Target.Type != "Commit"
	var explicit map[int64]bool
	if kept {
		if explicit, err = s.collab.Subscriptions(ctx, n.Target); err != nil {
			return nil, err
		}
	}
	switch {
	case n.OnlyActor:
		add(n.ActorID, func(*reasons) {})
	case n.OnlyMentioned:
		for _, name := range n.Mentioned {
			u, err := s.users.UserByUsername(ctx, name)
			if errors.Is(err, identity.ErrUserNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			add(u.ID, func(r *reasons) { r.mentioned = true })
		}
	default:
		participants := n.Participants
		switch {
		case kept && (n.Event == "new_issue" || n.Event == "new_merge_request"):
			// What was just opened has the participants it was opened
			// with: its author and assignees (those its text mentions are
			// added below). The collab module's list is read when the
			// notice is handled, so a comment made meanwhile would mail
			// its writer the new-issue mail or not, by a race.
			participants = append([]int64{n.Target.AuthorID}, n.Target.AssigneeIDs...)
		case kept:
			var err error
			if participants, err = s.collab.Subscribers(ctx, n.Target); err != nil {
				return nil, err
			}
		}
		// The collab module counts the author and the assignees among
		// them, unless they unsubscribed.
		for _, id := range participants {
			add(id, func(r *reasons) { r.participant = true })
		}
		for _, name := range n.Mentioned {
			u, err := s.users.UserByUsername(ctx, name)
			if errors.Is(err, identity.ErrUserNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			add(u.ID, func(r *reasons) { r.mentioned, r.participant = true, true })
		}
		for _, id := range n.Direct {
			add(id, func(r *reasons) { r.direct = true })
		}
		// Watchers and custom levels are found among the team and the
		// users who chose a level on the project or its group.
		for _, id := range team {
			add(id, func(*reasons) {})
		}
		for _, rows := range []map[int64]*Setting{projectRows, groupRows} {
			for id := range rows {
				add(id, func(*reasons) {})
			}
		}
		// Explicit subscribers (the collab module counts them among the
		// participants already; this marks them).
		for id, on := range explicit {
			if on {
				add(id, func(r *reasons) { r.subscribed = true })
			}
		}
	}
	// An explicit unsubscription rejects whoever found the user: watcher,
	// custom level, participant, mentioned or reassigned.
	for id, on := range explicit {
		if r, ok := why[id]; ok && !on {
			r.unsubscribed = true
		}
	}
	slices.Sort(order) // deliveries in user id order: stable, and testable
	var out []recipient
	for _, id := range order {
		if id == n.ActorID && !n.OnlyActor {
			continue
		}
		global, err := globalRow(tx, id)
		if err != nil {
			return nil, err
		}
		eff := effective(global, groupRows[id], projectRows[id])
		if !wants(eff, why[id], n) {
			continue
		}
		u, ok, err := s.mayRead(ctx, id, n)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		email, err := s.notificationEmail(ctx, global, u.Email)
		if err != nil {
			return nil, err
		}
		if email != "" {
			out = append(out, recipient{UserID: id, Email: email})
		}
	}
	return out, nil
}

// wants applies a user's effective level to a notice (GITLAB-FACTS 13),
// in the order of GitLab 9.x's build_recipients: the level (disabled
// mutes, mention keeps only the mentioned, watch and custom add), then the
// explicit subscribers are added whatever their level, then whoever
// unsubscribed from the target is taken out.
func wants(eff *Setting, r *reasons, n *notice) bool {
	switch {
	case r.unsubscribed:
		return false
	case r.subscribed:
		return true
	case eff.Level == LevelDisabled:
		return false
	}
	if n.OnlyActor {
		// A pipeline's result: failed for participating and watch, either
		// for a custom level that chose it; never at the mention level.
		switch eff.Level {
		case LevelCustom:
			return eff.Events[n.Event]
		case LevelParticipating, LevelWatch:
			return n.Event != "success_pipeline"
		}
		return false
	}
	switch {
	case r.mentioned || r.direct:
		return true
	case eff.Level == LevelMention:
		return false
	case eff.Level == LevelWatch:
		return true
	case r.participant:
		return true
	}
	return eff.Level == LevelCustom && eff.Events[n.Event]
}

// mayRead: the user is active and may see the notice's target.
func (s *Service) mayRead(ctx context.Context, id int64, n *notice) (identity.UserInfo, bool, error) {
	u, err := s.users.UserByID(ctx, id)
	if errors.Is(err, identity.ErrUserNotFound) {
		return u, false, nil
	}
	if err != nil || u.State != "active" {
		return u, false, err
	}
	p, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin, External: u.External})
	if err != nil {
		return u, false, nil
	}
	action := projects.ReadIssues
	switch n.Target.Type {
	case "MergeRequest":
		action = projects.ReadMergeRequests
	case "Pipeline":
		action = projects.ReadJobs
	case "Commit":
		action = projects.ReadCode
	}
	info, err := s.access.RequireID(auth.WithPrincipal(ctx, p), n.ProjectID, action)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return u, false, nil
	}
	if err != nil {
		return u, false, err
	}
	t := n.Target
	if t.Confidential && info.Level < projects.Reporter && id != t.AuthorID && !slices.Contains(t.AssigneeIDs, id) {
		return u, false, nil
	}
	return u, true, nil
}

func globalRow(tx *store.Tx, user int64) (*Setting, error) {
	row, err := settings.GetBy(tx, "key", settingKey(SourceGlobal, 0, user))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return row, err
}

// sourceRows reads the settings of a project or a group by user.
func sourceRows(tx *store.Tx, source string, id int64) (map[int64]*Setting, error) {
	ids, err := settings.IDsBy(tx, "source", sourceKey(source, id))
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*Setting, len(ids))
	for _, rid := range ids {
		row, err := settings.Get(tx, rid)
		if err != nil {
			return nil, err
		}
		out[row.UserID] = row
	}
	return out, nil
}
