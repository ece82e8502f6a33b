package internal

// Resolving threads and award emoji on a merge request's Overview: the
// resolve form of a thread (the collab service's ResolveThread, as PUT
// .../discussions/:id?resolved= does), "N of M threads resolved", and the
// merge request's and its comments' award emoji with the form that
// toggles the visitor's (Awards, AddAward, RemoveAward: the award emoji
// API's calls).

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// offerResolve gives a resolvable thread its resolve (or unresolve) form
// when the visitor may, by the service's rule (can_resolve?: the
// thread's first author, the merge request's author or a Developer), in a
// project that is not archived.
func (pg *mrPages) offerResolve(w http.ResponseWriter, r *http.Request, info projects.ProjectInfo, m mergerequest.MergeRequest, t target.Thread, tv *threadView) {
	uid := auth.FromContext(r.Context()).UserID()
	if !tv.Resolvable || uid == 0 || info.Archived || len(t.Notes) == 0 {
		return
	}
	if uid != t.Notes[0].AuthorID && uid != m.AuthorID && info.Level < int(projects.Developer) {
		return
	}
	tv.Resolve = &web.ResolveForm{Action: pg.site.URL(mrURL(info.PathWithNamespace, m.IID, "/resolve")), CSRF: pg.site.CSRFToken(w, r),
		Resolved: tv.Resolved}
}

// resolution counts the resolvable threads of the merge request: those
// of the page shown when it has them all, else all of them read again.
func (pg *mrPages) resolution(ctx context.Context, where target.Where, total int, shown []web.Entry) (web.Resolution, error) {
	var res web.Resolution
	if total <= len(shown) {
		res.Count(shown)
		return res, nil
	}
	threads, _, err := pg.s.Collab.Threads(ctx, where, target.Page{Limit: total})
	if err != nil {
		return res, err
	}
	for _, t := range threads {
		resolvable, resolved := false, len(t.Notes) > 0
		for _, n := range t.Notes {
			resolvable = resolvable || n.Resolvable
			resolved = resolved && n.Resolvable && n.Resolved
		}
		if resolvable {
			res.Total++
			if resolved {
				res.Resolved++
			}
		}
	}
	return res, nil
}

// resolve resolves or unresolves the posted thread (resolved=true or
// false) and returns to it; the service refuses a visitor who may not
// (the 403 page) and changes nothing.
func (pg *mrPages) resolve(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	id := r.PostFormValue("discussion_id")
	var resolved bool
	switch r.PostFormValue("resolved") {
	case "true":
		resolved = true
	case "false":
	default:
		pg.site.ErrorMessage(w, r, http.StatusBadRequest, "Invalid request", "The thread is to be resolved or unresolved.")
		return
	}
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	_, err := pg.s.Collab.ResolveThread(ctx, where, id, resolved)
	switch {
	case err == nil:
		pg.site.Redirect(w, r, mrURL(full, iid, "")+"#discussion_"+id)
	case errors.Is(err, target.ErrDiscussionNotFound), errors.Is(err, target.ErrBadParam):
		pg.site.NotFound(w, r)
	default:
		pg.fail(w, r, err)
	}
}

// awardCalls binds the collab service's award emoji calls to the merge
// request where names.
func (pg *mrPages) awardCalls(where target.Where) web.AwardCalls {
	return web.AwardCalls{
		List: func(ctx context.Context, note *string) ([]web.Given, error) {
			list, _, err := pg.s.Collab.Awards(ctx, where, note, target.Page{Limit: web.MaxAwardsRead})
			out := make([]web.Given, len(list))
			for i, a := range list {
				out[i] = web.Given{ID: a.ID, Name: a.Name, UserID: a.UserID}
			}
			return out, err
		},
		Add: func(ctx context.Context, note *string, name string) error {
			if _, err := pg.s.Collab.AddAward(ctx, where, note, name); err != nil && !errors.Is(err, target.ErrAwardTaken) {
				return err
			}
			return nil
		},
		Remove: func(ctx context.Context, note *string, id string) error {
			return pg.s.Collab.RemoveAward(ctx, where, note, id)
		},
	}
}

// awarder reads the merge request's awards for the visitor: with a form
// for one who may comment (awarding is commenting's right).
func (pg *mrPages) awarder(w http.ResponseWriter, r *http.Request, info projects.ProjectInfo, where target.Where, authorID int64, threads []target.Thread, mayAward bool) web.Awarder {
	a := web.Awarder{Calls: pg.awardCalls(where), Me: auth.FromContext(r.Context()).UserID(), Authors: map[int64]int64{0: authorID},
		NameOf: func(ctx context.Context, id int64) string { return pg.s.renderer(ctx).user(id).Name }}
	if mayAward {
		a.Form = web.Awards{Action: pg.site.URL(mrsURL(info.PathWithNamespace, "/"+where.Ref+"/award_emoji")), CSRF: pg.site.CSRFToken(w, r)}
	}
	for _, t := range threads {
		for _, n := range t.Notes {
			a.Authors[n.ID] = n.AuthorID
		}
	}
	return a
}

// noteAwards fills the awards of a thread's users' notes, read in one
// transaction (the collab service's reads join it).
func (pg *mrPages) noteAwards(ctx context.Context, a web.Awarder, notes []web.Note) error {
	return pg.s.DB.View(ctx, func(tx *store.Tx) error {
		for i := range notes {
			if notes[i].System {
				continue
			}
			aw, err := a.Awards(tx.Context(), notes[i].ID)
			if err != nil {
				return err
			}
			notes[i].Awards = aw
		}
		return nil
	})
}

// awardRefusals answer a refused award: the service's refusal of the
// visitor (their own vote, a locked merge request) is the 403 page, a
// note that is not the merge request's the 404 page, as the API's.
var awardRefusals = web.Refusals{Page: refusals.Page,
	Missing:   append([]error{target.ErrNoteNotFound, target.ErrBadParam}, refusals.Missing...),
	Forbidden: append([]error{target.ErrAwardNotFound}, refusals.Forbidden...)}

// award toggles the visitor's award emoji of the posted name on the merge
// request or on its note note_id (web.ToggleAward) and returns to it.
func (pg *mrPages) award(w http.ResponseWriter, r *http.Request, iid mergerequest.IID) {
	ctx, full := r.Context(), r.PathValue("owner")
	if pg.s.Collab == nil {
		pg.site.NotFound(w, r)
		return
	}
	where := target.Where{Type: mergerequest.NoteableType, Project: full, Ref: strconv.FormatInt(int64(iid), 10)}
	anchor, err := web.ToggleAward(ctx, pg.awardCalls(where), auth.FromContext(ctx).UserID(), r.PostFormValue("note_id"), r.PostFormValue("name"))
	if err != nil {
		pg.site.Fail(w, r, err, awardRefusals)
		return
	}
	pg.site.Redirect(w, r, mrURL(full, iid, "")+anchor)
}
