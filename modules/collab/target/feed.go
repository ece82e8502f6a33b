package target

import (
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// feedActions are the feed's words for the actions of the owners' events
// (a hook's object_attributes.action) that the feeds show.
var feedActions = map[string]feed.Action{
	"open":   feed.Opened,
	"close":  feed.Closed,
	"reopen": feed.Reopened,
	"merge":  feed.Merged,
}

// FeedEntry is the activity feed's entry of a change of target t (number
// iid in its project) by userID, titled with the target's title: action is the change as its
// module's event says it ("open", "close", "reopen", "merge"); other
// actions ("update"), and changes by no user, have none (ok false).
// Opening and merging happen once to a target; closing and reopening
// repeat, so the time of the change (at) names each in the key that makes
// a redelivery harmless ("issues.closed:12:<ns>"; module is the key's
// prefix).
func FeedEntry(module string, t Target, iid int64, title string, userID int64, action string, at time.Time) (ev feed.Event, ok bool) {
	fa, shown := feedActions[action]
	if !shown || userID <= 0 {
		return feed.Event{}, false
	}
	key := module + "." + string(fa) + ":" + strconv.FormatInt(t.ID, 10)
	if fa == feed.Closed || fa == feed.Reopened {
		key += ":" + strconv.FormatInt(at.UnixNano(), 10)
	}
	return feed.Event{ProjectID: t.ProjectID, AuthorID: userID, ActionName: fa, TargetID: t.ID, TargetType: t.Type,
		TargetIID: iid, TargetTitle: title, Key: key}, true
}
