package internal

// The projects module's share of a backup: the uploads directory (files
// only: an upload has no record in the store), and the count of projects.

import (
	"context"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpec declares the uploads directory to backups and restores.
var BackupSpec = fennec.BackupSpec{Name: "projects", Dirs: []string{"uploads"}}

// BackupParticipants list the uploads as they are at the backup's point.
// Uploads are put whole, so a listed one never changes; one of a project deleted meanwhile may go
// away, and is then left out.
func BackupParticipants(blobs blob.Store) []fennec.BackupParticipant {
	return []fennec.BackupParticipant{{
		Name: "projects",
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			files, n, err := fennec.CaptureBlobs(ctx, blobs, "uploads")
			return fennec.BackupCapture{Files: files,
				Counts: map[string]int64{"projects": int64(projects.Count(tx)), "uploads": n}}, err
		},
	}}
}
