package internal

// The projects module's share of a backup: the uploads directory (files
// only: an upload has no record in the store), and the count of projects.

import (
	"context"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpec declares the uploads directory to backups and restores.
var BackupSpec = fennec.BackupSpec{Name: "projects", Dirs: []string{"uploads"}}

// BackupParticipants list the uploads as they are at the backup's point.
// Uploads are written whole under a temporary name and renamed, so a
// listed file never changes; one of a project deleted meanwhile may go
// away, and is then left out.
func BackupParticipants(cfg config.Config) []fennec.BackupParticipant {
	return []fennec.BackupParticipant{{
		Name: "projects",
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			files, n, err := fennec.CaptureTree(cfg.Data, "uploads", func(name string) bool {
				return strings.HasPrefix(name, ".tmp-")
			})
			return fennec.BackupCapture{Files: files,
				Counts: map[string]int64{"projects": int64(projects.Count(tx)), "uploads": n}}, err
		},
	}}
}
