package isotime

import (
	"fmt"
	"strings"
	"time"
)

// layouts are the forms clients send, the most precise first; a time
// without a zone is UTC.
var layouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"}

// Parse reads s (surrounding space ignored) in the first of the layouts it
// fits.
func Parse(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date or time", s)
}

// Day is the day s names (a date, or a time whose day counts), as the
// start of that day, UTC.
func Day(s string) (time.Time, error) {
	t, err := Parse(s)
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}
