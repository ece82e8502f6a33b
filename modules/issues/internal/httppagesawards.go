package internal

// Award emoji on the issue pages: the issue's and its comments' awards,
// and the form that toggles the visitor's, through the collab service's
// Awards, AddAward and RemoveAward (the award emoji API's calls).

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxAwardsShown bounds the awards one awardable's row reads.
const maxAwardsShown = 1000

// awarder reads the award emoji of one issue for its page.
type awarder struct {
	pg     *issuePages
	where  target.Where
	me     int64
	action string // the toggle form's target; "" for a visitor who may not award
	csrf   string
	author func(noteID int64) int64
}

// awarder is the issue's awarder for the visitor: a form for one who may
// comment (awarding is commenting's right).
func (pg *issuePages) awarder(w http.ResponseWriter, r *http.Request, info projects.ProjectInfo, where target.Where, authorID int64, authors map[int64]int64) awarder {
	a := awarder{pg: pg, where: where, me: auth.FromContext(r.Context()).UserID()}
	if a.me != 0 && !info.Archived {
		a.action = pg.site.URL(issuesURL(where.Project, "/"+where.Ref+"/award_emoji"))
		a.csrf = pg.site.CSRFToken(w, r)
	}
	a.author = func(noteID int64) int64 {
		if noteID == 0 {
			return authorID
		}
		return authors[noteID]
	}
	return a
}

// awards are the awards of the issue (noteID 0) or of one of its notes.
func (a awarder) awards(ctx context.Context, noteID int64) (*web.Awards, error) {
	given, err := a.pg.given(ctx, a.where, noteID)
	if err != nil {
		return nil, err
	}
	users := a.pg.s.renderer(ctx)
	form := web.Awards{Action: a.action, CSRF: a.csrf, Authored: a.me != 0 && a.author(noteID) == a.me}
	if noteID != 0 {
		form.NoteID = strconv.FormatInt(noteID, 10)
	}
	return web.NewAwards(given, a.me, func(id int64) string { return users.user(id).Name }, form), nil
}

// noteAwards are the awards of the notes ids, read in one transaction
// (the collab service's reads join it): a page of 500 comments asks 500
// times.
func (a awarder) noteAwards(ctx context.Context, ids []int64) (map[int64]*web.Awards, error) {
	out := make(map[int64]*web.Awards, len(ids))
	err := a.pg.s.db.View(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			aw, err := a.awards(tx.Context(), id)
			if err != nil {
				return err
			}
			out[id] = aw
		}
		return nil
	})
	return out, err
}

// given lists the awards of the issue or of its note noteID (0: the
// issue's own).
func (pg *issuePages) given(ctx context.Context, where target.Where, noteID int64) ([]web.Given, error) {
	var ref *string
	if noteID != 0 {
		s := strconv.FormatInt(noteID, 10)
		ref = &s
	}
	list, _, err := pg.s.collab.Awards(ctx, where, ref, target.Page{Limit: maxAwardsShown})
	if err != nil {
		return nil, err
	}
	out := make([]web.Given, len(list))
	for i, aw := range list {
		out[i] = web.Given{ID: aw.ID, Name: aw.Name, UserID: aw.UserID}
	}
	return out, nil
}

// award toggles the visitor's award emoji of the posted name on the issue
// or on its note note_id: taken back when they gave it, else given (POST
// or DELETE .../award_emoji). Only the emoji the pages offer are given.
func (pg *issuePages) award(w http.ResponseWriter, r *http.Request, iid issue.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	where := target.Where{Type: issue.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	back := issuesURL(full, "/"+where.Ref)
	name, noteRef := r.PostFormValue("name"), r.PostFormValue("note_id")
	var noteID int64
	if noteRef != "" {
		n, err := strconv.ParseInt(noteRef, 10, 64)
		if err != nil || n <= 0 {
			pg.site.NotFound(w, r)
			return
		}
		noteID = n
	}
	given, err := pg.given(ctx, where, noteID)
	if err != nil {
		pg.awardFailed(w, r, err)
		return
	}
	note := &noteRef
	if noteID == 0 {
		note = nil
	}
	if mine := web.MineOf(given, auth.FromContext(ctx).UserID(), name); mine != 0 {
		err = pg.s.collab.RemoveAward(ctx, where, note, strconv.FormatInt(mine, 10))
	} else if !web.Offered(name) {
		pg.site.ErrorMessage(w, r, http.StatusBadRequest, "Unknown emoji", "This page offers no such emoji.")
		return
	} else if _, err = pg.s.collab.AddAward(ctx, where, note, name); errors.Is(err, target.ErrAwardTaken) {
		err = nil
	}
	if err != nil {
		pg.awardFailed(w, r, err)
		return
	}
	if noteID != 0 {
		pg.site.Redirect(w, r, back+"#"+web.NoteAnchor(noteID))
		return
	}
	pg.site.Redirect(w, r, back+"#awards")
}

// awardFailed answers a refused award: the service's refusal of the
// visitor (their own vote, a locked target) is the 403 page, a note that
// is not the issue's the 404 page.
func (pg *issuePages) awardFailed(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, target.ErrAwardNotFound), errors.Is(err, auth.ErrUnauthorized):
		pg.site.Error(w, r, http.StatusForbidden)
	case errors.Is(err, target.ErrNoteNotFound), errors.Is(err, target.ErrBadParam):
		pg.site.NotFound(w, r)
	case errors.Is(err, target.ErrUnknownEmoji):
		pg.site.ErrorMessage(w, r, http.StatusBadRequest, "Unknown emoji", "This page offers no such emoji.")
	default:
		pg.fail(w, r, err)
	}
}
