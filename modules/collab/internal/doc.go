// Package internal implements the collab module: its tables (notes,
// per-noteable counts of user notes, subscriptions and participants, award
// emoji and their votes per awardable, todos; store.go, todostore.go,
// awards.go), the service (target.Service) over the one registry of target
// kinds: notes (comments.go, notes.go), threads (discussions.go), award
// emoji (awards.go), participants, todos (todos.go), targets' visibility
// and resolution (targets.go); the HTTP adapter (http*.go), which decodes,
// calls the service, renders GitLab's views and maps the errors, for every
// registered kind; and the cleanup subscribers. Only modules/collab may
// import it.
package internal
