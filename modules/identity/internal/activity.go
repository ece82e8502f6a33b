package internal

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
)

// ActivityView is one entry of GET /user/activities.
type ActivityView struct {
	Username       string   `json:"username"`
	LastActivityOn api.Date `json:"last_activity_on"`
	// LastActivityAt is deprecated in favour of LastActivityOn; same value.
	LastActivityAt api.Date `json:"last_activity_at"`
}

type activitiesInput struct {
	api.PageParams
	From string `query:"from" doc:"YYYY-MM-DD; default six months ago"`
}

type activitiesOutput struct {
	api.PageHeaders
	Body []ActivityView
}

// activityDays remembers the day each user's activity was last written, so
// git traffic writes the store at most once a day per user.
type activityDays struct {
	mu   sync.Mutex
	days map[uint64]time.Time
}

func (s *Service) registerActivity(a *api.API) {
	api.Register(a, api.Op{ID: "list-user-activities", Method: http.MethodGet, Path: "/user/activities", Tags: []string{"users"},
		Summary: "Users' last activity dates, oldest first (administrators)", Access: api.AdminOnly}, s.listActivities)
	// GET /users/{id}/events is served by the activity module, which
	// records the events.
}

func (s *Service) listActivities(ctx context.Context, in *activitiesInput) (*activitiesOutput, error) {
	from := s.now().UTC().AddDate(0, -6, 0)
	from = time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	if in.From != "" {
		t, err := time.Parse("2006-01-02", in.From)
		if err != nil {
			return nil, api.Invalid("from")
		}
		from = t
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
		return nil, err
	}
	sort.SliceStable(active, func(i, j int) bool { return active[i].LastActivityOn.Before(*active[j].LastActivityOn) })
	out := &activitiesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(active)), Body: []ActivityView{}}
	for _, u := range api.Window(active, in.PageParams) {
		d := api.Date(*u.LastActivityOn)
		out.Body = append(out.Body, ActivityView{Username: u.Username, LastActivityOn: d, LastActivityAt: d})
	}
	return out, nil
}

// RecordActivity notes that a user was active today (git over HTTP or SSH,
// sign-in). It writes at most once per user and day.
func (s *Service) RecordActivity(ctx context.Context, userID int64) error {
	today := s.now().UTC().Truncate(24 * time.Hour)
	s.activity.mu.Lock()
	if s.activity.days == nil {
		s.activity.days = map[uint64]time.Time{}
	}
	if d, ok := s.activity.days[uint64(userID)]; ok && d.Equal(today) {
		s.activity.mu.Unlock()
		return nil
	}
	s.activity.days[uint64(userID)] = today
	s.activity.mu.Unlock()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, uint64(userID))
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
		tx.OnCommit(s.invalidate)
		return nil
	})
}
