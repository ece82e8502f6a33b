package internal

import (
	"encoding/json"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// EventView is the Event resource of the spec. note appears only on
// "commented on" entries that carry one.
type EventView struct {
	Title          *string            `json:"title"`
	ProjectID      *int64             `json:"project_id"`
	ActionName     string             `json:"action_name"`
	TargetID       *int64             `json:"target_id"`
	TargetType     *string            `json:"target_type"`
	TargetTitle    *string            `json:"target_title"`
	AuthorID       int64              `json:"author_id"`
	Author         identity.BasicUser `json:"author"`
	AuthorUsername string             `json:"author_username"`
	Data           json.RawMessage    `json:"data"`
	PushData       *PushDataView      `json:"push_data,omitempty"`
	Note           json.RawMessage    `json:"note,omitempty"`
	CreatedAt      api.Time           `json:"created_at"`
}

func view(e entry.Entry, a identity.BasicUser) EventView {
	v := EventView{
		ActionName: string(e.Action), AuthorID: e.AuthorID, Author: a, AuthorUsername: a.Username,
		Title: nonEmpty(e.Title), TargetType: nonEmpty(e.TargetType), TargetTitle: nonEmpty(e.TargetTitle),
		Data: e.Data, Note: e.Note, CreatedAt: api.NewTime(e.CreatedAt),
	}
	if e.ProjectID != 0 {
		v.ProjectID = &e.ProjectID
	}
	if e.TargetID != 0 {
		v.TargetID = &e.TargetID
	}
	if len(v.Data) == 0 {
		v.Data = nil
	}
	v.PushData = pushData(e)
	return v
}

// PushDataView summarises a push entry as later GitLab versions do beside
// data (client-go reads it as push_data).
type PushDataView struct {
	CommitCount int     `json:"commit_count"`
	Action      string  `json:"action"`
	RefType     string  `json:"ref_type"`
	CommitFrom  *string `json:"commit_from"`
	CommitTo    *string `json:"commit_to"`
	Ref         string  `json:"ref"`
	CommitTitle *string `json:"commit_title"`
}

func pushData(e entry.Entry) *PushDataView {
	switch e.Action {
	case feed.PushedTo, feed.PushedNew, feed.Deleted:
	default:
		return nil
	}
	var d struct {
		Before, After, Ref string
		Commits            []struct{ Message string }
		Total              int `json:"total_commits_count"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil || d.Ref == "" {
		return nil
	}
	const zero = "0000000000000000000000000000000000000000"
	pd := &PushDataView{CommitCount: d.Total, Action: "pushed", RefType: "branch", Ref: strings.TrimPrefix(d.Ref, "refs/heads/")}
	if strings.HasPrefix(d.Ref, "refs/tags/") {
		pd.RefType, pd.Ref = "tag", strings.TrimPrefix(d.Ref, "refs/tags/")
	}
	if d.Before != zero && d.Before != "" {
		pd.CommitFrom = &d.Before
	} else {
		pd.Action = "created"
	}
	if d.After != zero && d.After != "" {
		pd.CommitTo = &d.After
	} else {
		pd.Action = "removed"
	}
	if n := len(d.Commits); n > 0 {
		title, _, _ := strings.Cut(d.Commits[n-1].Message, "\n")
		pd.CommitTitle = &title
	}
	return pd
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
