package internal

import (
	"context"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// TokenCount counts a user's stored tokens of every kind, for tests that
// check a request wrote none.
func (s *Service) TokenCount(ctx context.Context, userID int64) (int, error) {
	var n int
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := tokens.IDsBy(tx, "user", strconv.FormatInt(userID, 10))
		n = len(ids)
		return err
	})
	return n, err
}

// SetThrottleClock replaces the sign-in throttle's clock, so tests can let
// a lock run out without waiting ten minutes.
func (s *Service) SetThrottleClock(now func() time.Time) {
	s.throttle.mu.Lock()
	defer s.throttle.mu.Unlock()
	s.throttle.now = now
}
