package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// BenchmarkSearch is a selective search (a name's number, as
// GET /projects?search=p0999 asks) at 10,000 and 100,000 rows: through the
// search index with each candidate verified, against the unindexed scan
// of the same rows in the same run (scan-ms, and x-faster the ratio). The
// rows are written without the index and then indexed by Reindex, as the
// migration of an instance that has them does (reindex-s).
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 200x ./core/store/
func BenchmarkSearch(b *testing.B) {
	for _, rows := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint("rows=", rows), func(b *testing.B) {
			db := openDocs(b, store.Options{NoSync: true})
			ctx := context.Background()
			r := rand.New(rand.NewPCG(uint64(rows), 9))
			plain := store.NewTable[uint64, doc]("search.docs")
			words := []string{"Fennec", "forge", "API", "server", "mirror", "of", "the", "tools", "Go", "docs", "web", "tests"}
			for start := 0; start < rows; start += 5000 {
				err := db.Update(ctx, func(tx *store.Tx) error {
					for i := start; i < min(start+5000, rows); i++ {
						body := ""
						for range 6 {
							body += words[r.IntN(len(words))] + " "
						}
						d := &doc{Title: fmt.Sprintf("Project-%06d", i), Body: body}
						if err := plain.Insert(tx, d); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			began := time.Now()
			if err := db.UpdateAlone(ctx, func(tx *store.Tx) error { return docs.Reindex(tx, "search") }); err != nil {
				b.Fatal(err)
			}
			reindex := time.Since(began)
			const q = "ject-0099" // 100 rows at either size
			var want []uint64
			start := time.Now()
			const scans = 3
			for range scans {
				view(b, db, func(tx *store.Tx) error {
					var err error
					want, err = scanDocs(tx, q)
					return err
				})
			}
			scan := time.Since(start) / scans
			b.ResetTimer()
			for b.Loop() {
				view(b, db, func(tx *store.Tx) error {
					got, ok, err := searchDocs(tx, q)
					if err != nil || !ok || len(got) != len(want) {
						b.Fatalf("search: %d rows (scan %d), ok %v, %v", len(got), len(want), ok, err)
					}
					return nil
				})
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(scan.Microseconds())/1000, "scan-ms")
			b.ReportMetric(float64(per.Microseconds())/1000, "search-ms")
			b.ReportMetric(float64(scan)/float64(per), "x-faster")
			b.ReportMetric(reindex.Seconds(), "reindex-s")
		})
	}
}
