package internal

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// activityDays remembers the day each user's activity was last written, so
// git traffic writes the store at most once a day per user.
type activityDays struct {
	mu   sync.Mutex
	days map[int64]time.Time
}

// ActiveDays implements user.Service (administrators).
func (s *Service) ActiveDays(ctx context.Context, since *time.Time, offset, limit int) ([]user.ActiveDay, int, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, 0, err
	}
	from := s.now().UTC().AddDate(0, -6, 0)
	from = time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	if since != nil {
		from = *since
	}
	var active []*User
	err := s.db.View(ctx, func(tx *store.Tx) error {
		return users.Scan(tx, false, 0, func(u *User) (bool, error) {
			if u.LastActivityOn != nil && !u.LastActivityOn.Before(from) {
				active = append(active, u)
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	sort.SliceStable(active, func(i, j int) bool { return active[i].LastActivityOn.Before(*active[j].LastActivityOn) })
	out := []user.ActiveDay{}
	for _, u := range store.Window(active, offset, limit) {
		out = append(out, user.ActiveDay{Username: u.Username, Day: *u.LastActivityOn})
	}
	return out, len(active), nil
}

// RecordActivity notes that a user was active today (git over HTTP or SSH,
// sign-in). It writes at most once per user and day.
func (s *Service) RecordActivity(ctx context.Context, userID int64) error {
	today := s.now().UTC().Truncate(24 * time.Hour)
	s.activity.mu.Lock()
	if s.activity.days == nil {
		s.activity.days = map[int64]time.Time{}
	}
	if d, ok := s.activity.days[userID]; ok && d.Equal(today) {
		s.activity.mu.Unlock()
		return nil
	}
	s.activity.days[userID] = today
	s.activity.mu.Unlock()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, userID)
		if err != nil {
			return err
		}
		if u.LastActivityOn != nil && !u.LastActivityOn.Before(today) {
			return nil
		}
		u.LastActivityOn = &today
		if err := users.Update(tx, u); err != nil {
			return err
		}
		return tx.Signal(identityChanged, nil)
	})
}
