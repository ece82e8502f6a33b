package internal

// Award emoji on the issue pages: the issue's and its comments' awards,
// and the form that toggles the visitor's, through the collab service's
// Awards, AddAward and RemoveAward (the award emoji API's calls), bound
// for core/web's award view and toggle.

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

// awardCalls binds the collab service's award emoji calls to the issue
// where names.
func (pg *issuePages) awardCalls(where target.Where) web.AwardCalls {
	return web.AwardCalls{
		List: func(ctx context.Context, note *string) ([]web.Given, error) {
			list, _, err := pg.s.collab.Awards(ctx, where, note, target.Page{Limit: web.MaxAwardsRead})
			out := make([]web.Given, len(list))
			for i, a := range list {
				out[i] = web.Given{ID: a.ID, Name: a.Name, UserID: a.UserID}
			}
			return out, err
		},
		Add: func(ctx context.Context, note *string, name string) error {
			if _, err := pg.s.collab.AddAward(ctx, where, note, name); err != nil && !errors.Is(err, target.ErrAwardTaken) {
				return err
			}
			return nil
		},
		Remove: func(ctx context.Context, note *string, id string) error {
			return pg.s.collab.RemoveAward(ctx, where, note, id)
		},
	}
}

// awarder reads the issue's awards for the visitor: with a form for one
// who may comment (awarding is commenting's right); authors are the
// notes' authors by note id, 0 the issue's.
func (pg *issuePages) awarder(w http.ResponseWriter, r *http.Request, info projects.ProjectInfo, where target.Where, authors map[int64]int64) web.Awarder {
	a := web.Awarder{Calls: pg.awardCalls(where), Me: auth.FromContext(r.Context()).UserID(), Authors: authors,
		NameOf: func(ctx context.Context, id int64) string { return pg.s.renderer(ctx).user(id).Name }}
	if a.Me != 0 && !info.Archived {
		a.Form = web.Awards{Action: pg.site.URL(issuesURL(where.Project, "/"+where.Ref+"/award_emoji")), CSRF: pg.site.CSRFToken(w, r)}
	}
	return a
}

// noteAwards are the awards of the notes ids, read in one transaction
// (the collab service's reads join it): a page of 500 comments asks 500
// times.
func (pg *issuePages) noteAwards(ctx context.Context, a web.Awarder, ids []int64) (map[int64]*web.Awards, error) {
	out := make(map[int64]*web.Awards, len(ids))
	err := pg.s.db.View(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			aw, err := a.Awards(tx.Context(), id)
			if err != nil {
				return err
			}
			out[id] = aw
		}
		return nil
	})
	return out, err
}

// awardRefusals answer a refused award: the service's refusal of the
// visitor (their own vote, an archived project) is the 403 page, a note
// that is not the issue's the 404 page, as the API's award emoji calls.
var awardRefusals = web.Refusals{Page: refusals.Page,
	Missing:   append([]error{target.ErrNoteNotFound, target.ErrBadParam}, refusals.Missing...),
	Forbidden: append([]error{target.ErrAwardNotFound, auth.ErrUnauthorized}, refusals.Forbidden...)}

// award toggles the visitor's award emoji of the posted name on the issue
// or on its note note_id (web.ToggleAward) and returns to it.
func (pg *issuePages) award(w http.ResponseWriter, r *http.Request, iid issue.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	where := target.Where{Type: issue.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	anchor, err := web.ToggleAward(ctx, pg.awardCalls(where), auth.FromContext(ctx).UserID(), r.PostFormValue("note_id"), r.PostFormValue("name"))
	if err != nil {
		pg.site.Fail(w, r, err, awardRefusals)
		return
	}
	pg.site.Redirect(w, r, issuesURL(full, "/"+where.Ref)+anchor)
}
