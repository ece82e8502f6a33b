package store

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned when a record or index key does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned (wrapped in a *ConflictError) when a write would
// break a unique index.
var ErrConflict = errors.New("store: unique key already taken")

// ConflictError says which unique index refused a write.
type ConflictError struct {
	Table, Index, Key string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: %s.%s %q already taken", e.Table, e.Index, e.Key)
}

// Unwrap lets errors.Is(err, ErrConflict) match.
func (e *ConflictError) Unwrap() error { return ErrConflict }
