// Package notifications owns the notification settings of users (global,
// per group, per project: GET/PUT /notification_settings and the group and
// project variants) and the e-mail they lead to.
//
// It listens to the issues, collab (notes), merge requests and CI modules' events
// (and identity's user created/deleted, projects' project deleted). The
// handler of an event stores a pending notice in the transaction that
// acknowledges the event (events.SubscribeInTx): a mail is queued exactly
// when its event is marked handled, and no recipient is read while the
// store's writers wait. The sender then works out the recipients as GitLab
// does (participants, watchers, custom levels, the newly mentioned, then
// the explicit subscribers whatever their level, minus whoever unsubscribed
// from the target, the actor, blocked users and those who may not see the
// target) in a read transaction, and stores the mail and one delivery per
// recipient in a short write that deletes the notice. A new event kind is
// one line in Subscribers and a function that turns the event into a
// notice.
//
// A sender loop delivers the queue to the SMTP server (smtp_address; TLS,
// STARTTLS, AUTH) or, with none configured, as .eml files to
// <data>/mail/outbox. A delivery is deleted from the queue right after the
// server accepted it; while the server cannot be reached the loop backs
// off (retry_initial doubling to retry_max), a 4xx for one mail postpones
// that mail alone, a 5xx drops it. What remains possible: a crash between
// the server's acceptance and the commit of that deletion (a few
// milliseconds, the marks are group-committed) sends that mail again after
// the restart; nothing is lost.
//
// It imports identity (users, e-mails, reset tokens), projects (Access,
// Teams), notes (subscribers, noteable kinds, mentions) and the event
// packages of issues, merge requests, notes and CI.
package notifications
