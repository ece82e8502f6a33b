package internal

import (
	"context"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/store"
)

// What the store keeps of spent things: nothing, once they can no longer
// matter. A code matters until it expires (a second use revokes what the
// first gave); a revoked token for an hour (a late refresh or reuse is
// refused either way, found or not); a session until it expires. Access
// tokens past their lifetime stay while their refresh token may be used.
const (
	sweepEvery      = time.Hour
	revokedKeptFor  = time.Hour
	sweepBatch      = 1000
	firstSweepDelay = time.Minute
	sweepTimeout    = 10 * time.Minute
)

// Sweep deletes expired codes and sessions and tokens revoked for over an
// hour, and returns how many rows it deleted.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now := s.now()
	var grantIDs, sessionIDs, tokenIDs []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if err := grants.Scan(tx, false, 0, func(g *Grant) (bool, error) {
			if !now.Before(g.ExpiresAt) {
				grantIDs = append(grantIDs, g.ID)
			}
			return true, nil
		}); err != nil {
			return err
		}
		if err := sessions.Scan(tx, false, 0, func(x *Session) (bool, error) {
			if !now.Before(x.ExpiresAt) {
				sessionIDs = append(sessionIDs, x.ID)
			}
			return true, nil
		}); err != nil {
			return err
		}
		return tokens.Scan(tx, false, 0, func(t *Token) (bool, error) {
			if t.RevokedAt != nil && now.Sub(*t.RevokedAt) >= revokedKeptFor {
				tokenIDs = append(tokenIDs, t.ID)
			}
			return true, nil
		})
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	// In batches, each checked again in its transaction: a row may have
	// gone meanwhile (an application deleted with its grants).
	for len(grantIDs)+len(sessionIDs)+len(tokenIDs) > 0 {
		g, x, t := take(&grantIDs), take(&sessionIDs), take(&tokenIDs)
		n := 0
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			n = 0
			for _, id := range g {
				if gr, err := grants.Get(tx, id); err == nil && !now.Before(gr.ExpiresAt) {
					if err := grants.Delete(tx, id); err != nil {
						return err
					}
					n++
				}
			}
			for _, id := range x {
				if se, err := sessions.Get(tx, id); err == nil && !now.Before(se.ExpiresAt) {
					if err := sessions.Delete(tx, id); err != nil {
						return err
					}
					n++
				}
			}
			for _, id := range t {
				if tk, err := tokens.Get(tx, id); err == nil && tk.RevokedAt != nil {
					if err := tokens.Delete(tx, id); err != nil {
						return err
					}
					n++
				}
			}
			return nil
		})
		if err != nil {
			return removed, err
		}
		removed += n
	}
	return removed, nil
}

// take removes and returns up to sweepBatch ids from the front of ids.
func take(ids *[]int64) []int64 {
	n := min(len(*ids), sweepBatch)
	out := (*ids)[:n]
	*ids = (*ids)[n:]
	return out
}

var _ fennec.Runner = (*Service)(nil)

// Run sweeps spent codes, tokens and sessions hourly until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	return fennec.Every(ctx, firstSweepDelay, sweepEvery, sweepTimeout, func(ctx context.Context) {
		n, err := s.Sweep(ctx)
		if err != nil {
			s.log.Warn("sweeping spent codes, tokens and sessions failed", zap.Error(err))
		} else if n > 0 {
			s.log.Info("swept spent codes, tokens and sessions", zap.Int("removed", n))
		}
	})
}
