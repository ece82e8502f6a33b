package internal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// Notes stored before threads existed get a thread each from migration 2:
// an id derived from the note's, stored on it and indexed, so that the
// discussions API finds them and a second run changes nothing.
func TestMigrationGivesOldNotesThreads(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "fennec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var names []string
	for _, tb := range Tables() {
		names = append(names, tb.Buckets()...)
	}
	if err := db.EnsureBuckets(names); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2017, 5, 24, 10, 0, 0, 0, time.UTC)
	var old []*Note
	// As version 1 stored them: no discussion id (notesTable.Insert, not
	// insertNote, which gives new notes one).
	if err := db.Update(ctx, func(tx *store.Tx) error {
		for _, body := range []string{"first", "second"} {
			n := &Note{ProjectID: 1, NoteableType: "Issue", NoteableID: 7, NoteableRef: 1, AuthorID: 2, Body: body, CreatedAt: at, UpdatedAt: at}
			if err := notesTable.Insert(tx, n); err != nil {
				return err
			}
			old = append(old, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, Migrations()); err != nil {
		t.Fatal(err)
	}
	issue := target.Noteable{Type: "Issue", ID: 7, IID: 1, ProjectID: 1}
	check := func() {
		t.Helper()
		if err := db.View(ctx, func(tx *store.Tx) error {
			for _, n := range old {
				want := legacyDiscussionID(n.ID)
				if !validDiscussionID(want) {
					t.Fatalf("derived id %q", want)
				}
				stored, err := notesTable.Get(tx, n.ID)
				if err != nil {
					return err
				}
				if stored.DiscussionID != want || stored.Body != n.Body {
					t.Fatalf("note %d after the migration: %+v", n.ID, stored)
				}
				list, err := discussionNotes(tx, issue, want)
				if err != nil || len(list) != 1 || list[0].ID != n.ID {
					t.Fatalf("thread %s: %v %v", want, list, err)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	check()
	if legacyDiscussionID(old[0].ID) == legacyDiscussionID(old[1].ID) {
		t.Fatal("two notes share a derived thread id")
	}
	// The backfill again (as a restore of an older backup would run it)
	// leaves the same ids.
	if err := db.Update(ctx, backfillDiscussionIDs); err != nil {
		t.Fatal(err)
	}
	check()
}
