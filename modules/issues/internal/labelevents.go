package internal

// Resource label events (GitLab 11.2): who added or removed which label
// on an issue or a merge request, and when. Labels are this module's, so
// the events are too: the merge requests module records its own through
// target.Labels, in the transaction of its change, as issues do here.
// Changes made before this existed have no events (as in GitLab, whose
// events start with the feature).

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// LabelEvent is one label added to or removed from a resource.
type LabelEvent struct {
	ID           int64     `json:"id"`
	ProjectID    int64     `json:"project_id"`
	ResourceType string    `json:"resource_type"` // "Issue", "MergeRequest"
	ResourceID   int64     `json:"resource_id"`   // the resource's global id
	UserID       int64     `json:"user_id"`
	LabelID      int64     `json:"label_id"`
	Action       string    `json:"action"` // add, remove
	CreatedAt    time.Time `json:"created_at"`
}

func (e *LabelEvent) RecordID() int64      { return e.ID }
func (e *LabelEvent) SetRecordID(id int64) { e.ID = id }

func resourceKey(typ string, id int64) string { return typ + ":" + store.IDString(id) }

// labelEvents are kept by resource (ids grow with time: a resource's
// events in id order are in the order they happened) and by project, for
// the project's removal.
var labelEvents = store.NewTable[int64, LabelEvent]("issues.label_events",
	store.Index[LabelEvent]{Name: "resource", Keys: func(e *LabelEvent) []string { return []string{resourceKey(e.ResourceType, e.ResourceID)} }},
	store.Index[LabelEvent]{Name: "project", Keys: func(e *LabelEvent) []string { return []string{store.IDString(e.ProjectID)} }})

// LabelEventTables are the tables of the label events.
func LabelEventTables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{labelEvents}
}

// The actions of a label event.
const (
	labelAdded   = "add"
	labelRemoved = "remove"
)

// recordLabelChange stores, in tx, an event per label userID added (in
// after, not before) and removed (the other way round), added ones first,
// each in the order of its list.
func (s *Service) recordLabelChange(tx *store.Tx, projectID int64, typ string, id, userID int64, before, after []int64) error {
	now := s.now()
	write := func(label int64, action string) error {
		return labelEvents.Insert(tx, &LabelEvent{ProjectID: projectID, ResourceType: typ, ResourceID: id, UserID: userID,
			LabelID: label, Action: action, CreatedAt: now})
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			if err := write(l, labelAdded); err != nil {
				return err
			}
		}
	}
	for _, l := range before {
		if !slices.Contains(after, l) {
			if err := write(l, labelRemoved); err != nil {
				return err
			}
		}
	}
	return nil
}

// RecordLabelChange implements target.Labels.
func (s *Service) RecordLabelChange(ctx context.Context, projectID int64, resourceType string, resourceID, userID int64, before, after []int64) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		return s.recordLabelChange(tx, projectID, resourceType, resourceID, userID, before, after)
	})
}

// RemoveLabelEvents implements target.Labels.
func (s *Service) RemoveLabelEvents(ctx context.Context, resourceType string, resourceID int64) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := labelEvents.DeleteBy(tx, "resource", resourceKey(resourceType, resourceID))
		return err
	})
}

// labelEventRecord is the contract's record of a stored label event
// (read in tx: its label, nil once deleted).
func labelEventRecord(tx *store.Tx, e *LabelEvent) (issue.LabelEvent, error) {
	r := issue.LabelEvent{ID: e.ID, UserID: e.UserID, CreatedAt: e.CreatedAt, ResourceType: e.ResourceType,
		ResourceID: e.ResourceID, Action: e.Action}
	l, err := labels.Get(tx, e.LabelID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return r, err
	default:
		rec := labelRecord(l)
		r.Label = &rec
	}
	return r, nil
}

// labelEventsOf are a resource's events, oldest first, limit of them from
// the offset-th (and how many there are): target.Labels' (Seams) and the
// issues'.
func (s *Service) labelEventsOf(ctx context.Context, resourceType string, resourceID int64, offset, limit int) ([]issue.LabelEvent, int, error) {
	var out []issue.LabelEvent
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := labelEvents.IDsBy(tx, "resource", resourceKey(resourceType, resourceID))
		if err != nil {
			return err
		}
		total = len(ids)
		ids = target.Window(ids, target.Page{Offset: offset, Limit: limit})
		out = make([]issue.LabelEvent, 0, len(ids))
		for _, id := range ids {
			e, err := labelEvents.Get(tx, id)
			if err != nil {
				return err
			}
			r, err := labelEventRecord(tx, e)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, total, err
}

// labelEventOf is one event of a resource; ErrLabelEventNotFound for any
// other.
func (s *Service) labelEventOf(ctx context.Context, resourceType string, resourceID int64, eventID int64) (issue.LabelEvent, error) {
	var out issue.LabelEvent
	err := s.db.View(ctx, func(tx *store.Tx) error {
		e, err := labelEvents.Get(tx, eventID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (e.ResourceType != resourceType || e.ResourceID != resourceID)) {
			return ErrLabelEventNotFound
		}
		if err != nil {
			return err
		}
		out, err = labelEventRecord(tx, e)
		return err
	})
	return out, err
}

// issueForEvents is an issue the caller may see, for its events.
func (s *Service) issueForEvents(ctx context.Context, ref issue.Ref) (*Issue, error) {
	info, err := s.readProject(ctx, ref.Project)
	if err != nil {
		return nil, err
	}
	var i *Issue
	err = s.db.View(ctx, func(tx *store.Tx) error {
		i, err = issueByIID(tx, info, int64(ref.IID), auth.FromContext(ctx).UserID())
		return err
	})
	return i, err
}

// LabelEvents implements issue.Service.
func (s *Service) LabelEvents(ctx context.Context, ref issue.Ref, offset, limit int) ([]issue.LabelEvent, int, error) {
	i, err := s.issueForEvents(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	return s.labelEventsOf(ctx, issue.NoteableType, i.ID, offset, limit)
}

// LabelEvent implements issue.Service.
func (s *Service) LabelEvent(ctx context.Context, ref issue.Ref, eventID int64) (issue.LabelEvent, error) {
	i, err := s.issueForEvents(ctx, ref)
	if err != nil {
		return issue.LabelEvent{}, err
	}
	return s.labelEventOf(ctx, issue.NoteableType, i.ID, eventID)
}

// LabelEventSubscribers remove a deleted project's label events, a step
// at a time (the project's issues go in onProjectDeleted).
func LabelEventSubscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Only(events.Subscribe("issues.label_events_project_deleted", s.onProjectDeletedLabelEvents), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
	}
}

func (s *Service) onProjectDeletedLabelEvents(ctx context.Context, ev projects.ProjectEvent) error {
	for {
		done := false
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			ids, err := labelEvents.FirstIDsBy(tx, "project", store.IDString(ev.ProjectID), removeStep)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if err := labelEvents.Delete(tx, id); err != nil {
					return err
				}
			}
			done = len(ids) < removeStep
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
