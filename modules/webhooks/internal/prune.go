package internal

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
)

// errStop ends a walk early.
var errStop = errors.New("stop")

// pruneLoop removes delivery log entries older than the retention, now
// and every PruneInterval, until the service stops.
func (s *Service) pruneLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.PruneInterval)
	defer t.Stop()
	for {
		if n, err := s.prune(context.Background()); err != nil {
			s.log.Error("webhooks: pruning the delivery log", zap.Error(err))
		} else if n > 0 {
			s.log.Debug("webhooks: delivery log pruned", zap.Int("entries", n))
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
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
