package internal

// The CI module's share of a backup: job traces and artifacts archives.

import (
	"context"
	"path/filepath"

	fennec "github.com/fennec-forge/fennec/core"
	fconfig "github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpec declares the traces and artifacts directories to backups and
// restores.
var BackupSpec = fennec.BackupSpec{Name: "ci", Dirs: []string{"ci/traces", "ci/artifacts"}}

// BackupParticipants list the traces and artifacts as they are at the
// backup's point. A trace only grows (a running job's is archived as long
// as it was then); an artifacts archive is renamed into place whole; one
// that expires during the backup is left out.
func BackupParticipants(cfg fconfig.Config) []fennec.BackupParticipant {
	return []fennec.BackupParticipant{{
		Name: "ci",
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			tmp := func(name string) bool { return filepath.Ext(name) == ".tmp" }
			traces, nt, err := fennec.CaptureTree(cfg.Data, "ci/traces", tmp)
			if err != nil {
				return fennec.BackupCapture{}, err
			}
			arts, na, err := fennec.CaptureTree(cfg.Data, "ci/artifacts", tmp)
			return fennec.BackupCapture{Files: append(traces, arts...),
				Counts: map[string]int64{"traces": nt, "artifacts": na}}, err
		},
	}}
}
