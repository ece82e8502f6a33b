package internal

// Which repositories have been written. A project's repository is made on
// disk when it is first touched (Storage.Open), not when the project is
// created: creating a project is one row in the store, and the repository
// of a project nobody pushed to costs nothing. A repository that is not on
// disk is then either new (made empty when touched) or lost (a store
// restored without its repositories, a disk that lost them). What tells
// them apart is this table: every way content enters a repository (a ref
// change through the ref journal, a fork, an import) records its project
// here in the store, and the check for missing repositories (missing.go)
// looks only at these. Losing an empty repository loses nothing: it is
// made anew, empty, when touched.

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
)

// repoWritten records that a project's repository has had content.
type repoWritten struct {
	ID        int64 `json:"id"`
	ProjectID int64 `json:"project_id"`
}

func (r *repoWritten) RecordID() int64      { return r.ID }
func (r *repoWritten) SetRecordID(id int64) { r.ID = id }

// writtenRepos holds one row per written repository. The row of project 0
// says that the table is complete: stores from before it were filled by
// the first check for missing repositories (missing.go).
var writtenRepos = store.NewTable[int64, repoWritten]("repository.written",
	store.Index[repoWritten]{Name: "project", Unique: true, Keys: func(r *repoWritten) []string {
		return []string{store.IDString(r.ProjectID)}
	}},
)

// writtenComplete is the project id of the row that marks the table complete.
const writtenComplete = 0

// markWritten records in tx that the project's repository has content.
func markWritten(tx *store.Tx, projectID int64) error {
	if _, err := writtenRepos.GetBy(tx, "project", store.IDString(projectID)); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return writtenRepos.Insert(tx, &repoWritten{ProjectID: projectID})
}

// unmarkWritten forgets a removed project's repository, in tx.
func unmarkWritten(tx *store.Tx, projectID int64) error {
	_, err := writtenRepos.DeleteBy(tx, "project", store.IDString(projectID))
	return err
}

// markWritten records that the project's repository has content, for the
// ways content arrives without the ref journal (a fork, an import). A
// storage without a store (some unit tests) records nothing.
func (s *Storage) markWritten(ctx context.Context, projectID int64) error {
	if s.db == nil {
		return nil
	}
	return s.db.Update(ctx, func(tx *store.Tx) error { return markWritten(tx, projectID) })
}

// writtenProjects are the projects whose repositories have content, and
// whether the table is complete (false for a store from before it).
func (s *Storage) writtenProjects(ctx context.Context) (ids []int64, complete bool, err error) {
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, complete = ids[:0], false
		return writtenRepos.Scan(tx, false, 0, func(r *repoWritten) (bool, error) {
			if r.ProjectID == writtenComplete {
				complete = true
			} else {
				ids = append(ids, r.ProjectID)
			}
			return true, nil
		})
	})
	return ids, complete, err
}
