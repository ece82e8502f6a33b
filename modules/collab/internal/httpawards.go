package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// AwardView is the Award Emoji resource.
type AwardView struct {
	ID            int64              `json:"id"`
	Name          string             `json:"name"`
	User          identity.BasicUser `json:"user"`
	CreatedAt     api.Time           `json:"created_at"`
	UpdatedAt     api.Time           `json:"updated_at"`
	AwardableID   int64              `json:"awardable_id"`
	AwardableType string             `json:"awardable_type"`
}

type awardListInput struct {
	ProjectPath
	api.PageParams
}

type noteAwardListInput struct {
	ProjectPath
	NoteID string `path:"note_id" doc:"The note's id"`
	api.PageParams
}

type awardInput struct {
	ProjectPath
	AwardID string `path:"award_id" doc:"The award emoji's id"`
}

type noteAwardInput struct {
	ProjectPath
	NoteID  string `path:"note_id" doc:"The note's id"`
	AwardID string `path:"award_id" doc:"The award emoji's id"`
}

type awardBody struct {
	Name string `json:"name" required:"true" doc:"The emoji's name without colons (thumbsup; +1 is stored as thumbsup)"`
}

type awardCreateInput struct {
	ProjectPath
	Body awardBody
}

type noteAwardCreateInput struct {
	ProjectPath
	NoteID string `path:"note_id" doc:"The note's id"`
	Body   awardBody
}

type awardListOutput struct {
	api.PageHeaders
	Body []AwardView
}

type awardOutput struct {
	Body AwardView
}

// registerAwards serves the award emoji operations of one kind: on the
// noteable (/projects/:id/issues/:issue_iid/award_emoji) and on each of its
// notes (.../notes/:note_id/award_emoji). As in GitLab, every one needs a
// signed-in caller, reads included.
func (s *Service) registerAwards(a *api.API, k target.Kind) {
	base := "/projects/{id}/" + k.Path + "/{" + k.Param + "}"
	tags := []string{"award_emoji", k.Path}
	id := func(verb, what string) string { return verb + "-" + k.Path + "-" + what }

	on := base + "/award_emoji"
	api.Register(a, api.Op{ID: id("list", "award-emoji"), Method: http.MethodGet, Path: on, Tags: tags, Access: api.SignedIn,
		Summary: "The award emoji of a " + k.Type + ", oldest first"}, func(ctx context.Context, in *awardListInput) (*awardListOutput, error) {
		return s.listAwards(ctx, k, in.ID, nil, in.PageParams)
	})
	api.Register(a, api.Op{ID: id("get", "award-emoji"), Method: http.MethodGet, Path: on + "/{award_id}", Tags: tags, Access: api.SignedIn,
		Summary: "One award emoji of a " + k.Type}, func(ctx context.Context, in *awardInput) (*awardOutput, error) {
		return s.getAward(ctx, k, in.ID, nil, in.AwardID)
	})
	api.Register(a, api.Op{ID: id("create", "award-emoji"), Method: http.MethodPost, Path: on, Tags: tags, Access: api.SignedIn,
		Summary: "Awards an emoji to a " + k.Type + " (once per user and emoji)"}, func(ctx context.Context, in *awardCreateInput) (*awardOutput, error) {
		return s.createAward(ctx, k, in.ID, nil, in.Body.Name)
	})
	api.Register(a, api.Op{ID: id("delete", "award-emoji"), Method: http.MethodDelete, Path: on + "/{award_id}", Tags: tags, Access: api.SignedIn,
		Summary: "Takes back an award emoji of a " + k.Type + " (its user or an administrator)"}, func(ctx context.Context, in *awardInput) (*struct{}, error) {
		return nil, s.deleteAward(ctx, k, in.ID, nil, in.AwardID)
	})

	onNote := base + "/notes/{note_id}/award_emoji"
	api.Register(a, api.Op{ID: id("list", "note-award-emoji"), Method: http.MethodGet, Path: onNote, Tags: tags, Access: api.SignedIn,
		Summary: "The award emoji of a note of a " + k.Type + ", oldest first"}, func(ctx context.Context, in *noteAwardListInput) (*awardListOutput, error) {
		return s.listAwards(ctx, k, in.ID, &in.NoteID, in.PageParams)
	})
	api.Register(a, api.Op{ID: id("get", "note-award-emoji"), Method: http.MethodGet, Path: onNote + "/{award_id}", Tags: tags, Access: api.SignedIn,
		Summary: "One award emoji of a note of a " + k.Type}, func(ctx context.Context, in *noteAwardInput) (*awardOutput, error) {
		return s.getAward(ctx, k, in.ID, &in.NoteID, in.AwardID)
	})
	api.Register(a, api.Op{ID: id("create", "note-award-emoji"), Method: http.MethodPost, Path: onNote, Tags: tags, Access: api.SignedIn,
		Summary: "Awards an emoji to a note of a " + k.Type + " (once per user and emoji)"}, func(ctx context.Context, in *noteAwardCreateInput) (*awardOutput, error) {
		return s.createAward(ctx, k, in.ID, &in.NoteID, in.Body.Name)
	})
	api.Register(a, api.Op{ID: id("delete", "note-award-emoji"), Method: http.MethodDelete, Path: onNote + "/{award_id}", Tags: tags, Access: api.SignedIn,
		Summary: "Takes back an award emoji of a note of a " + k.Type + " (its user or an administrator)"}, func(ctx context.Context, in *noteAwardInput) (*struct{}, error) {
		return nil, s.deleteAward(ctx, k, in.ID, &in.NoteID, in.AwardID)
	})
}

// awardTarget is what a request awards: a noteable, or one of its notes
// (noteID set), read again in each transaction (load).
type awardTarget struct {
	info   projects.ProjectInfo
	n      target.Noteable
	noteID uint64 // 0: the noteable itself
	// Filled by load:
	typ    string
	id     int64
	author int64
}

// target resolves the project and the noteable a request names, as the
// caller sees them, and the note id when the path names one.
func (s *Service) target(ctx context.Context, k target.Kind, projectRef string, noteRef *string) (*awardTarget, error) {
	info, n, err := s.resolve(ctx, k, projectRef)
	if err != nil {
		return nil, err
	}
	t := &awardTarget{info: info, n: n}
	if noteRef != nil {
		if t.noteID, err = parseNoteID(*noteRef); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// load reads the awarded note in tx (a note of another noteable is no note
// of this one) and fills the awardable's type, id and author.
func (t *awardTarget) load(tx *store.Tx) error {
	if t.noteID == 0 {
		t.typ, t.id, t.author = t.n.Type, t.n.ID, t.n.AuthorID
		return nil
	}
	note, err := noteOf(tx, t.n, t.noteID)
	if err != nil {
		return err
	}
	t.typ, t.id, t.author = noteAwardable, int64(note.ID), note.AuthorID
	return nil
}

// awardOf reads award id of the target; an award of another awardable is
// no award of this one.
func (t *awardTarget) awardOf(tx *store.Tx, id uint64) (*Award, error) {
	a, err := awardsTable.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (a.AwardableType != t.typ || a.AwardableID != t.id)) {
		return nil, ErrAwardNotFound
	}
	return a, err
}

// parseAwardID is an award id from the path: not a number is 400, as
// GitLab's Integer parameter; a number that names no award is 404.
func parseAwardID(s string) (uint64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, api.Invalid("award_id")
	}
	if id <= 0 {
		return 0, ErrAwardNotFound
	}
	return uint64(id), nil
}

func (s *Service) listAwards(ctx context.Context, k target.Kind, projectRef string, noteRef *string, page api.PageParams) (*awardListOutput, error) {
	t, err := s.target(ctx, k, projectRef, noteRef)
	if err != nil {
		return nil, err
	}
	var list []*Award
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if err := t.load(tx); err != nil {
			return err
		}
		ids, err := awardsOf(tx, t.typ, t.id)
		if err != nil {
			return err
		}
		total = len(ids)
		list, err = loadAwards(tx, api.Window(ids, page))
		return err
	})
	if err != nil {
		return nil, err
	}
	views, err := s.awardViews(ctx, list)
	if err != nil {
		return nil, err
	}
	return &awardListOutput{PageHeaders: api.Paginate(ctx, page, total), Body: views}, nil
}

func (s *Service) getAward(ctx context.Context, k target.Kind, projectRef string, noteRef *string, awardRef string) (*awardOutput, error) {
	t, err := s.target(ctx, k, projectRef, noteRef)
	if err != nil {
		return nil, err
	}
	id, err := parseAwardID(awardRef)
	if err != nil {
		return nil, err
	}
	var a *Award
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if err := t.load(tx); err != nil {
			return err
		}
		a, err = t.awardOf(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	v, err := s.awardView(ctx, a)
	if err != nil {
		return nil, err
	}
	return &awardOutput{Body: v}, nil
}

// The reasons an award is not given, each answered by the caller in its
// own words (the award emoji API and a note's emoji body differ).
var (
	// errAwardRefused: the caller may not give this award (a vote on what
	// they wrote themselves, or the noteable refuses comments).
	errAwardRefused = errors.New("notes: award refused")
	// errUnknownEmoji: the name is no emoji.
	errUnknownEmoji = errors.New("notes: unknown emoji")
	// errAwardTaken: the caller gave this emoji to the awardable already.
	errAwardTaken = errors.New("notes: award already given")
)

// mayAward is GitLab's rule of who may award what: anyone who may comment,
// except that nobody votes (thumbsup, thumbsdown) on what they wrote.
func mayAward(author, user int64, name string) bool {
	return author != user || (name != upvoteName && name != downvoteName)
}

// award gives user's emoji name (normalized) to the target, in tx.
func (s *Service) award(tx *store.Tx, t *awardTarget, user int64, name string) (*Award, error) {
	if err := t.load(tx); err != nil {
		return nil, err
	}
	if !mayAward(t.author, user, name) {
		return nil, errAwardRefused
	}
	if !knownEmojiName(name) {
		return nil, errUnknownEmoji
	}
	at := s.now().UTC()
	a := &Award{ProjectID: t.n.ProjectID, AwardableType: t.typ, AwardableID: t.id, NoteableType: t.n.Type, NoteableID: t.n.ID,
		UserID: user, Name: name, CreatedAt: at, UpdatedAt: at}
	err := insertAward(tx, a)
	if errors.Is(err, store.ErrConflict) {
		return nil, errAwardTaken
	}
	return a, err
}

// awardError words a refused award as GitLab's award emoji API did: every
// refusal is "404 Award Emoji Not Found", and a record that failed its
// validation is a 404 whose message carries Ruby's inspection of the
// errors.
//
// GITLAB-FACTS: 9.x answers not_found!("Award Emoji #{award.errors.messages}")
// for an award that was not saved, so an unknown name is
// 404 {"message":"404 Award Emoji {:name=>[\"is not included in the list\"]} Not Found"}
// and a second award of the same emoji by the same user
// 404 {"message":"404 Award Emoji {:name=>[\"has already been taken\"]} Not Found"},
// not the 400 of a validation error elsewhere.
func awardError(err error, thing string) error {
	switch {
	case errors.Is(err, errAwardRefused):
		return ErrAwardNotFound
	case errors.Is(err, errUnknownEmoji):
		return api.NotFound(thing + ` {:name=>["is not included in the list"]}`)
	case errors.Is(err, errAwardTaken):
		return api.NotFound(thing + ` {:name=>["has already been taken"]}`)
	}
	return err
}

func (s *Service) createAward(ctx context.Context, k target.Kind, projectRef string, noteRef *string, rawName string) (*awardOutput, error) {
	t, err := s.target(ctx, k, projectRef, noteRef)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(rawName) == "" {
		return nil, api.Missing("name")
	}
	if err := writable(t.info); err != nil {
		return nil, err
	}
	// Awarding is commenting's right (a locked merge request refuses
	// both), but a refusal is GitLab's 404 of the award API.
	if k.CanComment != nil {
		if err := k.CanComment(ctx, t.info, t.n); err != nil {
			if errors.Is(err, projects.ErrForbidden) {
				return nil, ErrAwardNotFound
			}
			return nil, err
		}
	}
	user := auth.FromContext(ctx).UserID()
	var a *Award
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		a, err = s.award(tx, t, user, normalizeEmoji(rawName))
		return err
	})
	if err != nil {
		return nil, awardError(err, "Award Emoji")
	}
	v, err := s.awardView(ctx, a)
	if err != nil {
		return nil, err
	}
	return &awardOutput{Body: v}, nil
}

func (s *Service) deleteAward(ctx context.Context, k target.Kind, projectRef string, noteRef *string, awardRef string) error {
	t, err := s.target(ctx, k, projectRef, noteRef)
	if err != nil {
		return err
	}
	id, err := parseAwardID(awardRef)
	if err != nil {
		return err
	}
	if err := writable(t.info); err != nil {
		return err
	}
	caller := auth.FromContext(ctx)
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := t.load(tx); err != nil {
			return err
		}
		a, err := t.awardOf(tx, id)
		if err != nil {
			return err
		}
		// GITLAB-FACTS: 9.x answers unauthorized! (401, not 403) when
		// someone other than the award's user or an administrator takes
		// it back.
		if a.UserID != caller.UserID() && !caller.IsAdmin() {
			return api.Unauthorized()
		}
		return deleteAward(tx, a)
	})
}

// emojiNote answers a note whose body is only the emoji name (normalized)
// on n: the emoji is awarded to n instead, and the award is the answer.
// Like a comment, it marks the caller's todos on n done.
//
// GITLAB-FACTS (GitLab 8.x's Notes::CreateService, which the spec
// describes: "a different object is returned"): a second award of the same
// emoji is 404 {"message":"404 Note {:name=>[\"has already been taken\"]} Not Found"},
// the notes API's wording for a note that was not saved.
func (s *Service) emojiNote(ctx context.Context, info projects.ProjectInfo, n target.Noteable, user int64, name string) (*noteOutput, error) {
	t := &awardTarget{info: info, n: n}
	var a *Award
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = s.award(tx, t, user, name); err != nil {
			return err
		}
		return s.TodosDone(tx.Context(), n.Target(), user)
	})
	if err != nil {
		return nil, awardError(err, "Note")
	}
	v, err := s.awardView(ctx, a)
	if err != nil {
		return nil, err
	}
	return &noteOutput{Body: v}, nil
}

// awardViews renders awards with one user lookup per user; a deleted user
// is the ghost user, and their awards stay.
func (s *Service) awardViews(ctx context.Context, list []*Award) ([]AwardView, error) {
	base := api.ExternalURLFrom(ctx)
	users := map[int64]identity.BasicUser{}
	out := make([]AwardView, 0, len(list))
	for _, a := range list {
		u, ok := users[a.UserID]
		if !ok {
			info, err := s.users.UserByID(ctx, a.UserID)
			switch {
			case errors.Is(err, identity.ErrUserNotFound):
				u = identity.GhostUser(base, a.UserID)
			case err != nil:
				return nil, err
			default:
				u = identity.NewBasicUser(base, info)
			}
			users[a.UserID] = u
		}
		out = append(out, AwardView{ID: int64(a.ID), Name: a.Name, User: u, CreatedAt: api.NewTime(a.CreatedAt),
			UpdatedAt: api.NewTime(a.UpdatedAt), AwardableID: a.AwardableID, AwardableType: a.AwardableType})
	}
	return out, nil
}

// awardView renders one award.
func (s *Service) awardView(ctx context.Context, a *Award) (AwardView, error) {
	views, err := s.awardViews(ctx, []*Award{a})
	if err != nil {
		return AwardView{}, err
	}
	return views[0], nil
}
