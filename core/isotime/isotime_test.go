package isotime

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-11-28T10:11:12.5Z":    time.Date(2026, 11, 28, 10, 11, 12, 5e8, time.UTC),
		"2026-11-28T10:11:12+0200":  time.Date(2026, 11, 28, 8, 11, 12, 0, time.UTC),
		"2026-11-28T10:11:12":       time.Date(2026, 11, 28, 10, 11, 12, 0, time.UTC),
		" 2026-11-28 10:11:12 ":     time.Date(2026, 11, 28, 10, 11, 12, 0, time.UTC),
		"2026-11-28":                time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC),
		"2026-11-28T23:30:00-05:00": time.Date(2026, 11, 29, 4, 30, 0, 0, time.UTC),
	} {
		got, err := Parse(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-13-01", "28/11/2026", "2026-11-28T25:00:00"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestDay(t *testing.T) {
	got, err := Day("2026-11-28T23:30:00-05:00")
	if err != nil || !got.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Day: %v, %v", got, err)
	}
	if _, err := Day("nope"); err == nil {
		t.Error("Day accepted nope")
	}
}
