package pipeline

import (
	"errors"
	"testing"
	"time"
)

func TestParseExpireIn(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	tests := []struct {
		in    string
		want  time.Duration
		never bool
	}{
		{"1 week", 7 * day, false},
		{"3 days 4 hrs", 3*day + 4*time.Hour, false},
		{"30 mins", 30 * time.Minute, false},
		{"3600", time.Hour, false},
		{"42", 42 * time.Second, false},
		{"never", 0, true},
		{" Never ", 0, true},
		{"1h30m", 90 * time.Minute, false},
		{"2.5 hours", 150 * time.Minute, false},
		{"1 day, 2 hours and 3 minutes", day + 2*time.Hour + 3*time.Minute, false},
		{"2 Weeks", 14 * day, false},
		{"1 month", 30 * day, false},
		{"1 yr", 365 * day, false},
		{"5s", 5 * time.Second, false},
		{"1 sec", time.Second, false},
		{"1:30", 90 * time.Second, false},
		{"1:00:00", time.Hour, false},
		{"0", 0, false},
	}
	for _, tt := range tests {
		d, never, err := ParseExpireIn(tt.in)
		if err != nil || d != tt.want || never != tt.never {
			t.Errorf("ParseExpireIn(%q) = %v, %v, %v; want %v, %v", tt.in, d, never, err, tt.want, tt.never)
		}
	}
	for _, bad := range []string{"", "soon", "1 fortnight", "week", "-1 day", "1..2 days", "1:2:3:4", "1:x", "and", "9999999999 years", "99999999999999999999:00"} {
		if d, _, err := ParseExpireIn(bad); !errors.Is(err, ErrBadDuration) {
			t.Errorf("ParseExpireIn(%q) = %v, %v; want ErrBadDuration", bad, d, err)
		}
	}
}
