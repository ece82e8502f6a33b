package internal

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
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

func (s *Service) listAwards(ctx context.Context, k target.Kind, projectRef string, noteRef *string, p api.PageParams) (*awardListOutput, error) {
	list, total, err := s.Awards(ctx, where(ctx, k, projectRef), noteRef, page(p))
	if err != nil {
		return nil, err
	}
	views, err := s.awardViews(ctx, list)
	if err != nil {
		return nil, err
	}
	return &awardListOutput{PageHeaders: api.Paginate(ctx, p, total), Body: views}, nil
}

func (s *Service) getAward(ctx context.Context, k target.Kind, projectRef string, noteRef *string, awardRef string) (*awardOutput, error) {
	a, err := s.Award(ctx, where(ctx, k, projectRef), noteRef, awardRef)
	if err != nil {
		return nil, err
	}
	v, err := s.awardView(ctx, a)
	if err != nil {
		return nil, err
	}
	return &awardOutput{Body: v}, nil
}

func (s *Service) createAward(ctx context.Context, k target.Kind, projectRef string, noteRef *string, rawName string) (*awardOutput, error) {
	a, err := s.AddAward(ctx, where(ctx, k, projectRef), noteRef, rawName)
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
	return s.RemoveAward(ctx, where(ctx, k, projectRef), noteRef, awardRef)
}

// awardError words a refused award as GitLab's award emoji API did: a
// record that failed its validation is a 404 whose message carries Ruby's
// inspection of the errors (thing is the API's name of the record: "Award
// Emoji", or "Note" for a note that is only an emoji).
//
// GITLAB-FACTS: 9.x answers not_found!("Award Emoji #{award.errors.messages}")
// for an award that was not saved, so an unknown name is
// 404 {"message":"404 Award Emoji {:name=>[\"is not included in the list\"]} Not Found"}
// and a second award of the same emoji by the same user
// 404 {"message":"404 Award Emoji {:name=>[\"has already been taken\"]} Not Found"},
// not the 400 of a validation error elsewhere.
func awardError(err error, thing string) error {
	switch {
	case errors.Is(err, target.ErrUnknownEmoji):
		return api.NotFound(thing + ` {:name=>["is not included in the list"]}`)
	case errors.Is(err, target.ErrAwardTaken):
		return api.NotFound(thing + ` {:name=>["has already been taken"]}`)
	}
	return err
}

// awardViews renders awards with one user lookup per user; a deleted user
// is the ghost user, and their awards stay.
func (s *Service) awardViews(ctx context.Context, list []target.Award) ([]AwardView, error) {
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
		out = append(out, AwardView{ID: a.ID, Name: a.Name, User: u, CreatedAt: api.NewTime(a.CreatedAt),
			UpdatedAt: api.NewTime(a.UpdatedAt), AwardableID: a.AwardableID, AwardableType: a.AwardableType})
	}
	return out, nil
}

// awardView renders one award.
func (s *Service) awardView(ctx context.Context, a target.Award) (AwardView, error) {
	views, err := s.awardViews(ctx, []target.Award{a})
	if err != nil {
		return AwardView{}, err
	}
	return views[0], nil
}
