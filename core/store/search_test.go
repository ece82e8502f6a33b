package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// doc is a row with two searched texts.
type doc struct {
	ID    uint64 `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

func (d *doc) RecordID() uint64      { return d.ID }
func (d *doc) SetRecordID(id uint64) { d.ID = id }

func docTexts(d *doc) []string { return []string{d.Title, d.Body} }

var docs = store.NewTable[uint64, doc]("search.docs",
	store.Index[doc]{Name: "search", Search: true, Keys: docTexts})

func openDocs(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	db := openDB(t, opts)
	if err := db.EnsureBuckets(docs.Buckets()); err != nil {
		t.Fatal(err)
	}
	return db
}

// docMatches is the exact rule the index serves.
func docMatches(d *doc, q string) bool {
	return store.ContainsFold(d.Title, q) || store.ContainsFold(d.Body, q)
}

// searchDocs is a search through the index, verified by the rule; ok false
// when the query is too short for the index.
func searchDocs(tx *store.Tx, q string) ([]uint64, bool, error) {
	ids, ok, err := docs.Search(tx, "search", q)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := []uint64{}
	for _, id := range ids {
		d, err := docs.Get(tx, id)
		if err != nil {
			return nil, true, err
		}
		if docMatches(d, q) {
			out = append(out, id)
		}
	}
	return out, true, nil
}

// scanDocs is the unindexed answer.
func scanDocs(tx *store.Tx, q string) ([]uint64, error) {
	out := []uint64{}
	err := docs.Scan(tx, false, 0, func(d *doc) (bool, error) {
		if docMatches(d, q) {
			out = append(out, d.ID)
		}
		return true, nil
	})
	return out, err
}

// An alphabet small enough for trigrams to overlap and repeat, with upper
// and lower case of the same letters, multi-byte runes whose lower case
// differs in length or bytes (İ, Σ/σ/ς, Ä), CJK, a space and a NUL.
var alphabet = []rune("abcABCxyZ _-İiıΣσςÄä日本\x00")

func randText(r *rand.Rand, max int) string {
	n := r.IntN(max + 1)
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// randQuery is a random text, or a piece of a stored one in another case.
func randQuery(r *rand.Rand, stored []*doc) string {
	if len(stored) == 0 || r.IntN(3) == 0 {
		return randText(r, 6)
	}
	d := stored[r.IntN(len(stored))]
	s := d.Title
	if r.IntN(2) == 0 {
		s = d.Body
	}
	rs := []rune(s)
	if len(rs) == 0 {
		return ""
	}
	i := r.IntN(len(rs))
	j := i + 1 + r.IntN(min(len(rs)-i, 8))
	q := string(rs[i:j])
	switch r.IntN(3) {
	case 0:
		q = strings.ToUpper(q)
	case 1:
		q = strings.ToLower(q)
	}
	return q
}

// Search through the index finds exactly the rows an unindexed scan finds,
// in the same order, through inserts, updates and deletes of random rows.
func TestSearchEqualsScan(t *testing.T) {
	t.Parallel()
	db := openDocs(t, store.Options{NoSync: true})
	ctx := context.Background()
	r := rand.New(rand.NewPCG(33, 1))
	var live []*doc
	check := func(round int) {
		t.Helper()
		err := db.View(ctx, func(tx *store.Tx) error {
			for range 40 {
				q := randQuery(r, live)
				want, err := scanDocs(tx, q)
				if err != nil {
					return err
				}
				got, ok, err := searchDocs(tx, q)
				if err != nil {
					return err
				}
				if ok != (len(strings.ToLower(q)) >= store.MinSearch) {
					t.Errorf("round %d: Search(%q) ok = %v", round, q, ok)
				}
				if ok && !slices.Equal(got, want) {
					t.Errorf("round %d: Search(%q) = %v, scan = %v", round, q, got, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for round := range 20 {
		err := db.Update(ctx, func(tx *store.Tx) error {
			live = live[:0]
			if err := docs.Scan(tx, false, 0, func(d *doc) (bool, error) { live = append(live, d); return true, nil }); err != nil {
				return err
			}
			for range 40 {
				switch op := r.IntN(10); {
				case op < 5 || len(live) == 0:
					d := &doc{Title: randText(r, 12), Body: randText(r, 40)}
					if err := docs.Insert(tx, d); err != nil {
						return err
					}
					live = append(live, d)
				case op < 8: // an update, read first as writers do, or not
					i := r.IntN(len(live))
					d := live[i]
					if r.IntN(2) == 0 {
						got, err := docs.Get(tx, d.ID)
						if err != nil {
							return err
						}
						d = got
					}
					d.Title = randText(r, 12)
					if r.IntN(2) == 0 {
						d.Body = randText(r, 40)
					}
					if err := docs.Update(tx, d); err != nil {
						return err
					}
					live[i] = d
				default:
					i := r.IntN(len(live))
					if err := docs.Delete(tx, live[i].ID); err != nil {
						return err
					}
					live = slices.Delete(live, i, i+1)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		check(round)
	}
}

// A row whose texts have more trigrams than the index keeps per row is
// still found, as a candidate of every search, and leaves no key behind
// when it shrinks or goes.
func TestSearchLongText(t *testing.T) {
	t.Parallel()
	db := openDocs(t, store.Options{NoSync: true})
	r := rand.New(rand.NewPCG(33, 2))
	var long strings.Builder
	for range 20000 {
		long.WriteByte(byte('a' + r.IntN(26)))
	}
	big := &doc{Title: "Huge", Body: long.String() + "NEEDLE"}
	small := &doc{Title: "needle in a haystack"}
	other := &doc{Title: "nothing"}
	update(t, db, func(tx *store.Tx) error {
		for _, d := range []*doc{big, small, other} {
			if err := docs.Insert(tx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if n := bucketKeys(t, db, "search.docs#search"); n > 100 {
		t.Fatalf("the long row was split into trigrams: %d keys", n)
	}
	view(t, db, func(tx *store.Tx) error {
		got, _, err := searchDocs(tx, "NeEdLe")
		if err != nil || !slices.Equal(got, []uint64{big.ID, small.ID}) {
			t.Errorf("needle: %v %v", got, err)
		}
		cands, _, _ := docs.Search(tx, "search", "zzzq")
		if !slices.Equal(cands, []uint64{big.ID}) {
			t.Errorf("the long row must be every search's candidate: %v", cands)
		}
		return nil
	})
	big.Body = "short now"
	update(t, db, func(tx *store.Tx) error { return docs.Update(tx, big) })
	view(t, db, func(tx *store.Tx) error {
		if got, _, _ := searchDocs(tx, "needle"); !slices.Equal(got, []uint64{small.ID}) {
			t.Errorf("after shrinking: %v", got)
		}
		if got, _, _ := searchDocs(tx, "SHORT"); !slices.Equal(got, []uint64{big.ID}) {
			t.Errorf("the shrunk row by its new text: %v", got)
		}
		return nil
	})
	update(t, db, func(tx *store.Tx) error {
		for _, d := range []*doc{big, small, other} {
			if err := docs.Delete(tx, d.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if n := bucketKeys(t, db, "search.docs#search"); n != 0 {
		t.Errorf("%d index keys left after every row went", n)
	}
}

// A search index added to a table with rows is filled by Reindex, as a
// module's migration does.
func TestReindexFillsASearchIndex(t *testing.T) {
	t.Parallel()
	db := openDocs(t, store.Options{NoSync: true})
	ctx := context.Background()
	plain := store.NewTable[uint64, doc]("search.docs")
	update(t, db, func(tx *store.Tx) error {
		for i := range 50 {
			if err := plain.Insert(tx, &doc{Title: fmt.Sprintf("Row %03d", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, db, func(tx *store.Tx) error {
		if got, _, _ := searchDocs(tx, "row 007"); len(got) != 0 {
			t.Errorf("before Reindex: %v", got)
		}
		return nil
	})
	if err := db.UpdateAlone(ctx, func(tx *store.Tx) error { return docs.Reindex(tx, "search") }); err != nil {
		t.Fatal(err)
	}
	view(t, db, func(tx *store.Tx) error {
		if got, _, _ := searchDocs(tx, "ROW 007"); !slices.Equal(got, []uint64{8}) {
			t.Errorf("after Reindex: %v", got)
		}
		if got, _, _ := searchDocs(tx, "row 04"); !slices.Equal(got, []uint64{41, 42, 43, 44, 45, 46, 47, 48, 49, 50}) {
			t.Errorf("after Reindex, row 04: %v", got)
		}
		if _, ok, _ := docs.Search(tx, "search", "ro"); ok {
			t.Error("a two-byte query must be left to a scan")
		}
		if _, _, err := docs.Search(tx, "nope", "row"); err == nil {
			t.Error("Search on a missing index must fail")
		}
		return nil
	})
}
