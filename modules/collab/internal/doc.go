// Package internal implements the collab module: its tables (notes,
// per-noteable counts of user notes, subscriptions and participants, award
// emoji and their votes per awardable, todos), the service the owners of
// targets call (target.Service) over the one registry of target kinds, and
// the HTTP adapter (http*.go) that serves the notes, discussions, award
// emoji, participants and todos operations of every registered kind; the
// visibility of targets for the todos and the feeds, mentions and the
// cleanup subscribers. Only modules/collab may import it.
package internal
