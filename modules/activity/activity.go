package activity

import (
	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/activity/event"
	"github.com/fennec-forge/fennec/modules/activity/internal"
)

// Event asks the activity module to record a feed entry. Modules above
// activity publish it (events.Bus.Publish) in the transaction of the change
// it describes: a push ("pushed to", with Data), a merge request "opened", a
// note "commented on". Key, when set, makes redelivery harmless: a second
// event with the same key is dropped ("notes.note:42"). Its contract is
// package event, public so that it is not defined inside internal/.
type Event = event.Event

// Action is an Event's action_name, in GitLab's words.
type Action = event.Action

// The action names of GitLab's events API.
const (
	Created     = event.Created
	Updated     = event.Updated
	Closed      = event.Closed
	Reopened    = event.Reopened
	PushedTo    = event.PushedTo
	PushedNew   = event.PushedNew
	Deleted     = event.Deleted
	CommentedOn = event.CommentedOn
	Merged      = event.Merged
	Joined      = event.Joined
	Left        = event.Left
	Destroyed   = event.Destroyed
	Expired     = event.Expired
	Opened      = event.Opened
)

// Module is the activity module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("activity",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(internal.NewService),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideRoutes(internal.NewRoutes),
	)
}
