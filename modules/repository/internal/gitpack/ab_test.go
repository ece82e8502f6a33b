package gitpack

import "testing"

func BenchmarkAB(b *testing.B) {
	for _, fast := range []bool{false, true, false, true} {
		abFast = fast
		name := "klauspost"
		if fast {
			name = "own"
		}
		b.Run(name, BenchmarkReadCommitsAndTrees)
	}
	abFast = true
}
