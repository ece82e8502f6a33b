package internal

import (
	"context"
	"errors"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/store"
)

// maxLogPerHook bounds a hook's delivery log whatever its traffic: past
// it, each new attempt removes the hook's oldest (the retention prunes
// the rest by age). A busy hook's log thus stays a few megabytes at most
// (bodies up to maxResponseBody back), and its page a bounded read.
const maxLogPerHook = 200

// logAttempt records an attempt in its hook's log within tx, the
// transaction that moves the delivery's queue (or a manual attempt's
// own), and drops the hook's oldest entries beyond maxLogPerHook.
func logAttempt(tx *store.Tx, e *LogEntry) error {
	if err := deliveryLog.Insert(tx, e); err != nil {
		return err
	}
	ids, err := deliveryLog.IDsBy(tx, "hook", e.Hook)
	if err != nil {
		return err
	}
	// Ids grow with time: the first are the oldest.
	for len(ids) > maxLogPerHook {
		if err := deliveryLog.Delete(tx, ids[0]); err != nil {
			return err
		}
		ids = ids[1:]
	}
	return nil
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// pruneLoop removes delivery log entries older than the retention, now
// and every PruneInterval, until ctx ends.
func (s *Service) pruneLoop(ctx context.Context) {
	_ = fennec.Every(ctx, 0, s.cfg.PruneInterval, s.cfg.PruneInterval, func(ctx context.Context) {
		if n, err := s.prune(ctx); err != nil {
			s.log.Error("webhooks: pruning the delivery log", zap.Error(err))
		} else if n > 0 {
			s.log.Debug("webhooks: delivery log pruned", zap.Int("entries", n))
		}
	})
}

// prune deletes the log entries older than the retention, oldest first, a
// few hundred per transaction so that it never holds the writer long.
// Entries are numbered in the order they were written, so the walk stops
// at the first one young enough.
func (s *Service) prune(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.cfg.DeliveryLogRetention)
	total := 0
	for {
		var ids []int64
		more := false
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			ids, more = ids[:0], false
			err := deliveryLog.Scan(tx, false, 0, func(e *LogEntry) (bool, error) {
				if !e.CreatedAt.Before(cutoff) {
					return false, nil
				}
				ids = append(ids, e.ID)
				if len(ids) == 500 {
					more = true
					return false, nil
				}
				return true, nil
			})
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := deliveryLog.Delete(tx, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(ids)
		if !more {
			return total, nil
		}
	}
}
