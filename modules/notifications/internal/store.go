package internal

import (
	"encoding/json"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
)

// The notification levels as the rows keep them (notification.Level).
const (
	LevelDisabled      = string(notification.Disabled)
	LevelParticipating = string(notification.Participating)
	LevelWatch         = string(notification.Watch)
	LevelGlobal        = string(notification.Global)
	LevelMention       = string(notification.Mention)
	LevelCustom        = string(notification.Custom)
)

// The sources a setting belongs to.
const (
	SourceGlobal  = "global"
	SourceGroup   = string(notification.Group)
	SourceProject = string(notification.Project)
)

// Setting is one user's notification setting for one source (their global
// one, a group, a project). A user without a row has the defaults:
// participating globally, global elsewhere.
type Setting struct {
	ID       int64  `json:"id"`
	UserID   int64  `json:"user_id"`
	Source   string `json:"source"`
	SourceID int64  `json:"source_id,omitempty"`
	Level    string `json:"level"`
	// Events are the custom level's switches; they are kept whatever the
	// level, and count only when it is custom (as GitLab keeps them).
	Events map[string]bool `json:"events,omitempty"`
	// NotificationEmail (global rows only): empty means the primary address.
	NotificationEmail string `json:"notification_email,omitempty"`
}

func (s *Setting) RecordID() int64      { return s.ID }
func (s *Setting) SetRecordID(id int64) { s.ID = id }

func sourceKey(source string, id int64) string { return source + ":" + store.IDString(id) }

func settingKey(source string, id, user int64) string {
	return sourceKey(source, id) + ":" + store.IDString(user)
}

var settings = store.NewTable[int64, Setting]("notifications.settings",
	store.Index[Setting]{Name: "key", Unique: true, Keys: func(s *Setting) []string {
		return []string{settingKey(s.Source, s.SourceID, s.UserID)}
	}},
	// source finds a project's or group's rows at once (its watchers and
	// custom levels); global rows are read one user at a time.
	store.Index[Setting]{Name: "source", Keys: func(s *Setting) []string {
		if s.Source == SourceGlobal {
			return nil
		}
		return []string{sourceKey(s.Source, s.SourceID)}
	}},
	store.Index[Setting]{Name: "user", Keys: func(s *Setting) []string { return []string{store.IDString(s.UserID)} }},
)

// Mail is one notification, rendered once and shared by its deliveries
// (one per recipient).
type Mail struct {
	ID int64 `json:"id"`
	// Key names the event that caused the mail ("note:12"); a redelivered
	// event finds it taken and queues nothing again.
	Key       string            `json:"key"`
	Subject   string            `json:"subject"`
	Text      string            `json:"text"`
	HTML      string            `json:"html"`
	MessageID string            `json:"message_id"` // without angle brackets
	InReplyTo string            `json:"in_reply_to,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Pending counts the deliveries not yet done; the mail goes with the
	// last one.
	Pending   int       `json:"pending"`
	CreatedAt time.Time `json:"created_at"`
}

func (m *Mail) RecordID() int64      { return m.ID }
func (m *Mail) SetRecordID(id int64) { m.ID = id }

// Delivery is one mail to one address as versions before the mail queue
// kept it (notifications.deliveries); migration 2 moves such rows into the
// mail queue. The sender still uses it to hand a job to the transport.
type Delivery struct {
	ID       int64     `json:"id"`
	MailID   int64     `json:"mail_id"`
	UserID   int64     `json:"user_id,omitempty"`
	To       string    `json:"to"`
	Attempts int       `json:"attempts,omitempty"`
	NextTry  time.Time `json:"next_try,omitempty"`
	// LastError is the last failure, for an administrator reading the
	// store.
	LastError string `json:"last_error,omitempty"`
}

func (d *Delivery) RecordID() int64      { return d.ID }
func (d *Delivery) SetRecordID(id int64) { d.ID = id }

// Target remembers what the module last saw of an issue or a merge
// request (its assignees and mentions), so that an update tells a
// reassignment and who the previous assignees were, or new mentions,
// without the event carrying them.
type Target struct {
	ID        int64   `json:"id"`
	Key       string  `json:"key"` // "Issue:12"
	Assignees []int64 `json:"assignees"`
	// Mentions are the usernames (lower case) its title and description
	// mentioned, so that an edit tells the new ones.
	Mentions []string `json:"mentions,omitempty"`
	// Commenters are the users who commented on a commit ("Commit:<project
	// id>:<sha>"), its participants besides its author.
	Commenters []int64 `json:"commenters,omitempty"`
}

func (t *Target) RecordID() int64      { return t.ID }
func (t *Target) SetRecordID(id int64) { t.ID = id }

// PendingNotice is an event worth mail whose recipients are not worked
// out yet. The event's handler stores it in the transaction that
// acknowledges the event (cheap: no recipient is read there, so the
// store's writers are not held up by a fan-out to a thousand watchers);
// the sender turns it into a mail and its deliveries, in one transaction
// that also deletes it.
type PendingNotice struct {
	ID     int64  `json:"id"`
	Key    string `json:"key"`
	Notice notice `json:"notice"`
}

func (p *PendingNotice) RecordID() int64      { return p.ID }
func (p *PendingNotice) SetRecordID(id int64) { p.ID = id }

var (
	notices = store.NewTable[int64, PendingNotice]("notifications.notices",
		store.Index[PendingNotice]{Name: "key", Unique: true, Keys: func(p *PendingNotice) []string { return []string{p.Key} }})
	mails = store.NewTable[int64, Mail]("notifications.mails",
		store.Index[Mail]{Name: "key", Unique: true, Keys: func(m *Mail) []string { return []string{m.Key} }})
	// oldDeliveries is where versions before the mail queue kept the
	// deliveries; migration 2 moves them into mailQueue.
	oldDeliveries = store.NewTable[int64, Delivery]("notifications.deliveries")
	targets       = store.NewTable[int64, Target]("notifications.targets",
		store.Index[Target]{Name: "key", Unique: true, Keys: func(t *Target) []string { return []string{t.Key} }})
)

// Tables lists the module's tables for declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{settings, notices, mails, targets, workqueue.Declared(mailQueue)}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{
		{Module: "notifications", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
		{Module: "notifications", Version: 2, Name: "deliveries move to the core work queue", Up: moveQueue},
	}
}

// moveQueue moves the deliveries an older version left queued into the
// mail queue, in id order (so each recipient's order holds), with their
// attempts, next try and last error, and removes the old table: a mail
// queued before an upgrade is still sent after it.
func moveQueue(tx *store.Tx) error {
	if store.Keys(oldDeliveries.Name()).Exists(tx) {
		var rows []*Delivery
		if err := oldDeliveries.Scan(tx, false, 0, func(d *Delivery) (bool, error) {
			rows = append(rows, d)
			return true, nil
		}); err != nil {
			return err
		}
		for _, d := range rows {
			payload, err := json.Marshal(&queuedMail{MailID: d.MailID, UserID: d.UserID, To: d.To})
			if err != nil {
				return err
			}
			var created time.Time
			if m, err := mails.Get(tx, d.MailID); err == nil {
				created = m.CreatedAt
			}
			err = workqueue.EnqueueIn(tx, mailQueue, workqueue.Item{Key: mailKey(d.To, d.UserID), Payload: payload,
				Attempts: d.Attempts, NextTry: d.NextTry, LastError: d.LastError, EnqueuedAt: created})
			if err != nil {
				return err
			}
		}
	}
	for _, name := range oldDeliveries.Buckets() {
		if err := store.Keys(name).Drop(tx); err != nil {
			return err
		}
	}
	return nil
}
