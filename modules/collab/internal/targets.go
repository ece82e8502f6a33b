package internal

import (
	"context"
	"errors"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Resolve implements target.Service: the kind's Resolve, for the modules
// that read targets of every kind (notifications).
func (s *Service) Resolve(ctx context.Context, typ string, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
	k, ok := s.noteKind(typ)
	if !ok {
		return target.Noteable{}, target.ErrUnknownKind
	}
	if k.Read != projects.ReadProject {
		if _, err := s.access.RequireID(ctx, p.ID, k.Read); err != nil {
			return target.Noteable{}, err
		}
	}
	return k.Resolve(ctx, p, ref)
}

// noteType is the target type of the feed entries of notes ("commented
// on"): the collab module's own, seen by whoever may see the note's
// noteable.
const noteType = "Note"

// Visible implements target.Service: for the activity feeds, as the
// caller in ctx, who may read the project already.
func (s *Service) Visible(ctx context.Context, typ string, projectID, id int64) (bool, error) {
	if typ == noteType {
		return s.noteVisible(ctx, projectID, id)
	}
	k, known := s.byType[typ]
	if !known {
		return false, nil // its module is not in this bundle: nobody can vouch for it
	}
	return s.visibleTo(ctx, k, projectID, id)
}

// visibleTo reports whether the caller in ctx may see target id of kind k
// in project projectID: they may do k.Read on the project (a hidden
// project, or a switched-off feature, hides every target), and k.Visible
// lets them see this one.
func (s *Service) visibleTo(ctx context.Context, k target.Kind, projectID, id int64) (bool, error) {
	info, err := s.access.RequireID(ctx, projectID, k.Read)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if k.Visible == nil {
		return true, nil
	}
	return k.Visible(ctx, info, id)
}

// asUser is ctx with userID as its principal, for what is asked on a
// user's behalf (their todos): ok is false for a deleted or blocked user.
func (s *Service) asUser(ctx context.Context, userID int64) (context.Context, bool, error) {
	u, err := s.users.UserByID(ctx, userID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return ctx, false, nil
	}
	if err != nil {
		return ctx, false, err
	}
	p, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin, Blocked: u.State != "active", External: u.External})
	if err != nil {
		return ctx, false, nil // blocked
	}
	return auth.WithPrincipal(ctx, p), true, nil
}

// resolveRef finds the target of kind k that ref names in project
// projectRef as the caller sees it: the project's 404, the kind's Read
// refused (403), then the kind's own answer.
func (s *Service) resolveRef(ctx context.Context, k target.Kind, projectRef string, ref int64) (projects.ProjectInfo, target.Noteable, error) {
	info, err := s.kindProject(ctx, k, projectRef)
	if err != nil {
		return info, target.Noteable{}, err
	}
	n, err := k.Resolve(ctx, info, ref)
	return info, n, err
}

// kindProject resolves project projectRef for the targets of kind k, as
// the caller sees it: 404 for a hidden project, 403 when k.Read is
// refused (the kind's feature switched off).
func (s *Service) kindProject(ctx context.Context, k target.Kind, projectRef string) (projects.ProjectInfo, error) {
	return s.access.Require(ctx, projectRef, k.Read)
}

// locate finds the target w names as the caller sees it: the project's
// 404, a malformed reference (400, told only once the project is there),
// the kind's Read refused (403), then the kind's own answer.
func (s *Service) locate(ctx context.Context, w target.Where) (projects.ProjectInfo, target.Kind, target.Noteable, error) {
	k, ok := s.noteKind(w.Type)
	if !ok {
		return projects.ProjectInfo{}, k, target.Noteable{}, target.ErrUnknownKind
	}
	info, err := s.kindProject(ctx, k, w.Project)
	ref, perr := strconv.ParseInt(w.Ref, 10, 64)
	malformed := perr != nil || ref <= 0
	switch {
	case err != nil && (!malformed || !errors.Is(err, projects.ErrForbidden)):
		// A refused Read is the kind's check, which a malformed
		// reference comes before.
		return info, k, target.Noteable{}, err
	case malformed:
		return info, k, target.Noteable{}, target.BadParam(k.Param)
	}
	n, err := k.Resolve(ctx, info, ref)
	return info, k, n, err
}

// SubscribeTo implements target.Service.
func (s *Service) SubscribeTo(ctx context.Context, typ, projectRef string, ref int64, subscribed bool) (projects.ProjectInfo, target.Noteable, error) {
	k, ok := s.noteKind(typ)
	if !ok {
		return projects.ProjectInfo{}, target.Noteable{}, target.ErrUnknownKind
	}
	caller := auth.FromContext(ctx)
	if caller.IsAnonymous() || caller.UserID() == 0 {
		return projects.ProjectInfo{}, target.Noteable{}, auth.ErrUnauthorized
	}
	info, n, err := s.resolveRef(ctx, k, projectRef, ref)
	if err != nil {
		return info, n, err
	}
	changed, err := s.Subscribe(ctx, n, caller.UserID(), subscribed)
	if err == nil && !changed {
		err = target.ErrUnchanged
	}
	return info, n, err
}

// noteVisible: a note gone since (deleted, or its noteable's kind left the
// bundle) is hidden; so is one whose noteable the caller may not see (the
// kind's Resolve refuses it, with the owner's not-found error, which this
// module cannot tell from another failure: hidden either way, fail closed).
// A failure to read the store is an error.
func (s *Service) noteVisible(ctx context.Context, projectID, noteID int64) (bool, error) {
	note, k, err := s.noteAndKind(ctx, projectID, noteID)
	if errors.Is(err, target.ErrNoteNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	info, err := s.access.RequireID(ctx, projectID, k.Read)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = k.Resolve(ctx, info, note.NoteableRef)
	return err == nil, nil
}

// noteAndKind reads note id of project projectID and the kind of its
// noteable; target.ErrNoteNotFound when there is no such note in the project or
// its kind is not registered.
func (s *Service) noteAndKind(ctx context.Context, projectID, id int64) (*Note, target.Kind, error) {
	var note *Note
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		note, err = notesTable.Get(tx, max(id, 0))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || (err == nil && note.ProjectID != projectID) {
		return nil, target.Kind{}, target.ErrNoteNotFound
	}
	if err != nil {
		return nil, target.Kind{}, err
	}
	k, ok := s.noteKind(note.NoteableType)
	if !ok {
		return nil, target.Kind{}, target.ErrNoteNotFound
	}
	return note, k, nil
}
