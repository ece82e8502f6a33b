package activity

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/activity/internal"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// Event asks the activity module to record a feed entry. Its contract is
// modules/projects/feed, where the modules that publish it (all of them
// above projects) can import it; they import that package, not this one,
// which sits above them. These names remain for readers of the feed.
type Event = feed.Event

// Action is an Event's action_name, in GitLab's words.
type Action = feed.Action

// The action names of GitLab's events API.
const (
	Created     = feed.Created
	Updated     = feed.Updated
	Closed      = feed.Closed
	Reopened    = feed.Reopened
	PushedTo    = feed.PushedTo
	PushedNew   = feed.PushedNew
	Deleted     = feed.Deleted
	CommentedOn = feed.CommentedOn
	Merged      = feed.Merged
	Joined      = feed.Joined
	Left        = feed.Left
	Destroyed   = feed.Destroyed
	Expired     = feed.Expired
	Opened      = feed.Opened
)

// Module is the activity module for fennec.WithModules. It provides
// entry.Service, the contract every reader of the feeds (the HTTP adapter
// included) goes through.
func Module() fennec.Module {
	return fennec.NewModule("activity",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		// Who may see a target is the collab module's (its registry of
		// target kinds), so a new kind needs no change here.
		fennec.Provide(internal.NewService,
			func(s *internal.Service) entry.Service { return s }),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
	)
}
