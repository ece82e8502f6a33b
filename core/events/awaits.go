package events

import (
	"encoding/json"

	fastjson "github.com/go-json-experiment/json/v1"

	"github.com/fennec-forge/fennec/core/store"
)

// Awaits says whether the outbox, as tx sees it, holds an event that
// subscriber has not handled yet (or is handling now) and whose payload
// match accepts. A module uses it to learn, in the snapshot of its own
// read, whether work that one of its subscribers does after a commit is
// still to come (CI: the pipeline of a push it has not handled yet).
//
// It reads the whole outbox, which is short while delivery keeps up but
// not bounded: ask it on rare paths only, never per event.
func (b *Bus) Awaits(tx *store.Tx, subscriber string, match func(payload json.RawMessage) bool) (bool, error) {
	s, ok := b.byName[subscriber]
	if !ok {
		return false, nil
	}
	found := false
	outbox.Walk(tx, nil, false, func(_, v []byte) bool {
		var e entry
		if err := fastjson.Unmarshal(v, &e); err != nil {
			return true // unreadable: delivery drops it, nobody will handle it
		}
		if e.Topic != s.Topic {
			return true
		}
		for _, name := range e.Pending {
			if name == subscriber {
				found = match(e.Payload)
				break
			}
		}
		return !found
	})
	return found, nil
}
