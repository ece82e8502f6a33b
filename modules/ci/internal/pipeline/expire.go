package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrBadDuration is returned by ParseExpireIn for text it cannot read.
var ErrBadDuration = errors.New("pipeline: not a duration")

// durationUnits are the unit words GitLab's duration parser understands.
// A month is 30 days and a year 365, as there.
var durationUnits = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "wk": 7 * 24 * time.Hour, "wks": 7 * 24 * time.Hour,
	"week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	"mo": 30 * 24 * time.Hour, "mos": 30 * 24 * time.Hour, "month": 30 * 24 * time.Hour, "months": 30 * 24 * time.Hour,
	"y": 365 * 24 * time.Hour, "yr": 365 * 24 * time.Hour, "yrs": 365 * 24 * time.Hour,
	"year": 365 * 24 * time.Hour, "years": 365 * 24 * time.Hour,
}

// ParseExpireIn reads an artifacts expire_in: "1 week", "3 days 4 hrs",
// "30 mins", "1h30m", "2.5 hours", "1 day, 2 hours and 3 minutes", a clock
// "1:30:00", plain seconds "3600", or "never" (never set, d zero).
func ParseExpireIn(s string) (d time.Duration, never bool, err error) {
	text := strings.ToLower(strings.TrimSpace(s))
	if text == "never" {
		return 0, true, nil
	}
	if text == "" {
		return 0, false, fmt.Errorf("%w: empty", ErrBadDuration)
	}
	if strings.Contains(text, ":") {
		d, err := parseClock(text)
		return d, false, err
	}
	var total float64 // nanoseconds, in float to detect overflow
	rest := strings.NewReplacer(",", " ").Replace(text)
	sawNumber := false
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		if strings.HasPrefix(rest, "and") && (len(rest) == 3 || rest[3] == ' ') {
			rest = rest[3:]
			continue
		}
		numEnd := strings.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
		if numEnd == 0 {
			return 0, false, fmt.Errorf("%w: %q", ErrBadDuration, s)
		}
		if numEnd < 0 {
			numEnd = len(rest)
		}
		n, perr := strconv.ParseFloat(rest[:numEnd], 64)
		if perr != nil {
			return 0, false, fmt.Errorf("%w: %q", ErrBadDuration, s)
		}
		rest = strings.TrimLeftFunc(rest[numEnd:], unicode.IsSpace)
		unitEnd := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) })
		if unitEnd < 0 {
			unitEnd = len(rest)
		}
		unit := time.Second // a bare number counts seconds
		if word := rest[:unitEnd]; word != "" && word != "and" {
			u, ok := durationUnits[word]
			if !ok {
				return 0, false, fmt.Errorf("%w: unknown unit %q", ErrBadDuration, word)
			}
			unit = u
			rest = rest[unitEnd:]
		}
		total += n * float64(unit)
		sawNumber = true
	}
	if !sawNumber {
		return 0, false, fmt.Errorf("%w: %q", ErrBadDuration, s)
	}
	if total >= math.MaxInt64 {
		return 0, false, fmt.Errorf("%w: %q is too long", ErrBadDuration, s)
	}
	return time.Duration(total), false, nil
}

// parseClock reads "h:mm:ss" or "mm:ss".
func parseClock(text string) (time.Duration, error) {
	parts := strings.Split(text, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("%w: %q", ErrBadDuration, text)
	}
	var total time.Duration
	for _, part := range parts {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%w: %q", ErrBadDuration, text)
		}
		total = total*60 + time.Duration(n)
	}
	if total > math.MaxInt64/time.Second {
		return 0, fmt.Errorf("%w: %q is too long", ErrBadDuration, text)
	}
	return total * time.Second, nil
}
