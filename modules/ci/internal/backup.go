package internal

// The CI module's share of a backup: job traces, artifacts archives and
// reports.

import (
	"context"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpec declares the traces, artifacts and reports directories to
// backups and restores (and so to the blob store, which takes keys under
// them only).
var BackupSpec = fennec.BackupSpec{Name: "ci", Dirs: []string{"ci/traces", "ci/artifacts", "ci/reports"}}

// BackupParticipants list the traces, artifacts and reports as they are
// at the backup's point. A trace only grows (a running job's is archived
// as long as it was then); an archive or a report is put whole; one that
// expires during the backup is left out.
func BackupParticipants(blobs blob.Store) []fennec.BackupParticipant {
	return []fennec.BackupParticipant{{
		Name: "ci",
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			counts := map[string]int64{}
			var files []fennec.BackupFile
			for _, dir := range []struct{ prefix, count string }{
				{"ci/traces", "traces"}, {"ci/artifacts", "artifacts"}, {"ci/reports", "reports"},
			} {
				list, n, err := fennec.CaptureBlobs(ctx, blobs, dir.prefix)
				if err != nil {
					return fennec.BackupCapture{}, err
				}
				files, counts[dir.count] = append(files, list...), n
			}
			return fennec.BackupCapture{Files: files, Counts: counts}, nil
		},
	}}
}
