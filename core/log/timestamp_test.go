package log

import (
	"testing"
	"time"
)

func TestAppendTimestampMatchesTheLayout(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("plus3", 3*3600), time.FixedZone("minus11", -11*3600)}
	start := time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)
	for i := 0; i < 5000; i++ {
		ts := start.Add(time.Duration(i) * 7919 * time.Minute).Add(time.Duration(i*37) * time.Millisecond)
		for _, z := range zones {
			in := ts.In(z)
			want := in.UTC().Format("2006-01-02T15:04:05.000Z")
			if got := string(AppendTimestamp(nil, in)); got != want {
				t.Fatalf("%v: got %s want %s", in, got, want)
			}
		}
	}
	if got := string(AppendTimestamp(nil, time.Date(2017, 5, 24, 12, 14, 38, 7_400_000, time.FixedZone("", 7200)))); got != "2017-05-24T10:14:38.007Z" {
		t.Fatalf("got %s", got)
	}
}
