// Package internal implements the notes module: its tables (notes,
// per-noteable counts of user notes, subscriptions and participants, award
// emoji and their votes per awardable), the service the owners of noteables
// call (notes.Service), the generic notes and award emoji operations served
// for every registered kind, their discussions (threads), mentions, the feed kind "Note" and the cleanup
// subscribers. Only modules/notes may import it.
package internal
