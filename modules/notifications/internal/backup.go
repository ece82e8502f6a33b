package internal

// The notifications module's share of a backup: the file outbox, the
// mails delivered without an SMTP server (the store says they were sent;
// the files are what was sent).

import (
	"context"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
)

// BackupSpec declares the file outbox to backups and restores (and so to
// the blob store, which takes keys under declared directories only).
var BackupSpec = fennec.BackupSpec{Name: "notifications", Dirs: []string{outboxPrefix}}

// BackupParticipants list the outbox's mails: each is put whole, so a
// listed one never changes.
func BackupParticipants(blobs blob.Store) []fennec.BackupParticipant {
	return []fennec.BackupParticipant{{
		Name: "notifications",
		Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
			files, n, err := fennec.CaptureBlobs(ctx, blobs, outboxPrefix)
			return fennec.BackupCapture{Files: files, Counts: map[string]int64{"outbox_mails": n}}, err
		},
	}}
}
