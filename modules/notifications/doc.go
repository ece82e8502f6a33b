// Package notifications owns the notification settings of users (global,
// per group, per project: GET/PUT /notification_settings and the group and
// project variants) and the e-mail they lead to: it listens to the issues,
// notes, merge requests and CI modules' events, works out the recipients as
// GitLab does (participants, watchers, custom levels, subscribers, minus the
// actor, blocked users and those who may not see the target), queues the
// mails in its own table in the transaction that acknowledges the event,
// and delivers them from that queue to an SMTP server (or, with none
// configured, to .eml files under <data>/mail/outbox).
//
// It imports identity (users, e-mails), projects (Access, Teams), notes
// (subscribers, noteable kinds, mentions) and the event packages of issues,
// merge requests, notes and CI.
package notifications
