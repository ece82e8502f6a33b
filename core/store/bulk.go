package store

import "context"

// AllBy returns the rows with the given key in an index, in id order: the
// rows IDsBy names, each read (a label's issues, a branch's merge
// requests), for the many callers that walked them one Get at a time.
func (t *Table[I, T, P]) AllBy(tx *Tx, index, key string) ([]P, error) {
	ids, err := t.IDsBy(tx, index, key)
	if err != nil {
		return nil, err
	}
	out := make([]P, 0, len(ids))
	for _, id := range ids {
		rec, err := t.Get(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// InBatches runs fn for k = 0 .. n-1, size of them per write transaction
// (Update), one transaction after the other: a bulk load too large for
// one transaction (benchmarks seed a project with many thousand rows).
// fn may run more than once for a k, as Update's may; a failed
// transaction stops it, with the batches before it committed.
func (db *DB) InBatches(ctx context.Context, n, size int, fn func(tx *Tx, k int) error) error {
	for done := 0; done < n; {
		batch := min(size, n-done)
		err := db.Update(ctx, func(tx *Tx) error {
			for k := done; k < done+batch; k++ {
				if err := fn(tx, k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		done += batch
	}
	return nil
}
