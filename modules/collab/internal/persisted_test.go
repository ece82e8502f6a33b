package internal

import (
	"slices"
	"testing"
)

// The collab module took over the notes and todos modules' data: a store
// and an outbox written before the merge must read the same, so the
// buckets, the migrations' module names and the subscribers' names stay
// those of the modules that wrote them.
func TestPersistedNamesAreTheNotesAndTodosModules(t *testing.T) {
	var buckets []string
	for _, tb := range Tables() {
		buckets = append(buckets, tb.Buckets()...)
	}
	for _, want := range []string{"notes.notes", "notes.subscriptions", "notes.user_counts", "notes.awards",
		"notes.award_votes", "todos.todos"} {
		if !slices.Contains(buckets, want) {
			t.Errorf("bucket %q is gone: %v", want, buckets)
		}
	}
	var migrations []string
	for _, m := range Migrations() {
		migrations = append(migrations, m.Module+"/"+m.Name)
	}
	if want := []string{"notes/tables", "notes/discussion ids", "todos/tables"}; !slices.Equal(migrations, want) {
		t.Errorf("migrations %v, want %v", migrations, want)
	}
	var names []string
	for _, s := range Subscribers(&Service{}) {
		names = append(names, s.Name+" "+s.Topic)
	}
	if want := []string{"notes.project-deleted projects.project", "todos.project-deleted projects.project",
		"todos.user-deleted identity.user_deleted"}; !slices.Equal(names, want) {
		t.Errorf("subscribers %v, want %v", names, want)
	}
}
