package web

import (
	"context"
	"strconv"
)

// MaxMenuCount bounds the count beside a menu entry: its Count may stop
// counting there (a bounded walk, never a whole list decoded on every
// page), and the header shows "99+".
const MaxMenuCount = 100

// menuEntry is a menu entry as the header shows it, with its count for
// this visitor ("" when it has none or it is zero).
type menuEntry struct {
	MenuItem
	CountText string
}

// menuEntryOf is m for the visitor in ctx: its Count asked, when it has
// one and the visitor is signed in (counts are a signed-in visitor's own:
// pending to-dos).
func menuEntryOf(ctx context.Context, m MenuItem, signedIn bool) menuEntry {
	e := menuEntry{MenuItem: m}
	if m.Count == nil || !signedIn {
		return e
	}
	switch n := m.Count(ctx); {
	case n >= MaxMenuCount:
		e.CountText = strconv.Itoa(MaxMenuCount-1) + "+"
	case n > 0:
		e.CountText = strconv.Itoa(n)
	}
	return e
}
