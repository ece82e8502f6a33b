// Package event is the contract of the events of collaboration that go
// through the core/events outbox: a note created or updated (NoteEvent, the
// collab module's), with what GitLab's Note Hook payload needs, for the
// webhooks and notifications modules; and a target merged with the texts
// that close issues (Merged, the merge requests module's), for the issues
// module, which sits below the publisher and so cannot know its events. It
// is a package of its own so that the contract is not defined inside
// internal/.
//
// The payloads wait in the outbox across upgrades, so their JSON is frozen:
// rename nothing, add fields only with omitempty. The topic is still
// "notes.note", the name it had when the notes were a module of their own.
package event
