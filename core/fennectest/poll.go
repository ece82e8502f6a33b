package fennectest

import (
	"strings"
	"testing"
	"time"
)

// Poll calls check until it reports done, and fails the test with the
// reason check gave last once within has passed: how a test waits for
// something that happens in the background (a delivery, a log entry, an
// empty queue), on the condition itself and never for a guessed time. The
// pause between looks starts at a millisecond (most conditions hold within
// a few) and grows to 10 ms, to spare a loaded machine.
func Poll(t testing.TB, within time.Duration, check func() (done bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for {
		done, why := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v: %s", within, why)
		}
		time.Sleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
}

// LineDiff is a small line diff (longest common subsequence) of two texts,
// "- " before a line only a has and "+ " before one only b has: enough to
// see which fields of a golden file changed.
func LineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + y[j] + "\n")
			j++
		default:
			out.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return out.String()
}
