package internal

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// SnippetView is the spec's Snippet resource (GitLab 9.x's ProjectSnippet
// entity plus the spec's visibility and expires_at). expires_at is always
// null: 9.x's API sets no expiry.
type SnippetView struct {
	ID          int64              `json:"id"`
	Title       string             `json:"title"`
	FileName    string             `json:"file_name"`
	Description *string            `json:"description"`
	Visibility  string             `json:"visibility"`
	Author      identity.BasicUser `json:"author"`
	UpdatedAt   api.Time           `json:"updated_at"`
	CreatedAt   api.Time           `json:"created_at"`
	ExpiresAt   *api.Time          `json:"expires_at"`
	ProjectID   *int64             `json:"project_id"`
	WebURL      string             `json:"web_url"`
}

// PersonalSnippetView is GitLab 9.x's PersonalSnippet entity: the same
// fields and raw_url, the address of its content.
type PersonalSnippetView struct {
	SnippetView
	RawURL string `json:"raw_url"`
}

// view renders a snippet; cache, when not nil, keeps the authors of a
// page.
func (h handlers) view(ctx context.Context, sn snippet.Snippet, cache map[int64]identity.BasicUser) (SnippetView, error) {
	base := api.ExternalURLFrom(ctx)
	author, err := h.author(ctx, base, sn.AuthorID, cache)
	if err != nil {
		return SnippetView{}, err
	}
	v := SnippetView{ID: int64(sn.ID), Title: sn.Title, FileName: sn.FileName, Description: sn.Description,
		Visibility: string(sn.Visibility), Author: author, UpdatedAt: api.NewTime(sn.UpdatedAt), CreatedAt: api.NewTime(sn.CreatedAt),
		WebURL: sn.WebURL}
	if sn.Personal() {
		v.WebURL = strings.TrimSuffix(base, "/") + "/snippets/" + strconv.FormatInt(int64(sn.ID), 10)
	} else {
		pid := sn.ProjectID
		v.ProjectID = &pid
	}
	return v, nil
}

// views renders a page of snippets.
func (h handlers) views(ctx context.Context, list []snippet.Snippet) ([]SnippetView, error) {
	out := make([]SnippetView, 0, len(list))
	cache := map[int64]identity.BasicUser{}
	for _, sn := range list {
		v, err := h.view(ctx, sn, cache)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (h handlers) personalView(ctx context.Context, sn snippet.Snippet, cache map[int64]identity.BasicUser) (PersonalSnippetView, error) {
	v, err := h.view(ctx, sn, cache)
	if err != nil {
		return PersonalSnippetView{}, err
	}
	return PersonalSnippetView{SnippetView: v, RawURL: v.WebURL + "/raw"}, nil
}

// author renders a snippet's author: the public view, or the ghost user
// when the author is gone (until the subscriber removes their snippets).
func (h handlers) author(ctx context.Context, base string, id int64, cache map[int64]identity.BasicUser) (identity.BasicUser, error) {
	if u, ok := cache[id]; ok {
		return u, nil
	}
	info, err := h.users.UserByID(ctx, id)
	var v identity.BasicUser
	switch {
	case errors.Is(err, identity.ErrUserNotFound):
		v = identity.GhostUser(base, id)
	case err != nil:
		return v, err
	default:
		v = identity.NewBasicUser(base, info)
	}
	if cache != nil {
		cache[id] = v
	}
	return v, nil
}

// rawOutput is a snippet's content as plain text, never sniffed by a
// browser, named by its file name.
type rawOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	NoSniff            string `header:"X-Content-Type-Options"`
	Body               []byte
}

func newRaw(fileName string, body []byte) *rawOutput {
	return &rawOutput{ContentType: "text/plain; charset=utf-8", ContentDisposition: contentDisposition(fileName),
		NoSniff: "nosniff", Body: body}
}

// contentDisposition is `inline` with the file name twice: filename=, a
// quoted ASCII stand-in every client reads (anything outside printable
// ASCII, and the quote and backslash, become '_'), and filename*=, the
// exact name percent-encoded in UTF-8 (RFC 6266, RFC 5987), which modern
// clients prefer. Neither can break out of the header: file names hold no
// control characters (checkFileName), and both forms are escaped anyway.
func contentDisposition(name string) string {
	ascii := []byte(name)
	plain := true
	for i, c := range ascii {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			ascii[i] = '_'
			plain = false
		}
	}
	if plain {
		return `inline; filename="` + name + `"`
	}
	return `inline; filename="` + string(ascii) + `"; filename*=UTF-8''` + extValue(name)
}

// extValue percent-encodes every byte of s outside RFC 5987's attr-char.
func extValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
