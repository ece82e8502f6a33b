package internal

// The release contract (package release) over the releases API's
// CreateRelease: one command for the API and for other modules (CI's
// release jobs), so both keep the same rules and the same transaction.

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/release"
)

// ReleaseService implements release.Service with the Writer.
type ReleaseService struct{ w *Writer }

var _ release.Service = ReleaseService{}

// NewReleaseService is the release contract over w.
func NewReleaseService(w *Writer) ReleaseService { return ReleaseService{w: w} }

// Create makes a release as the user in ctx (release.Service).
func (s ReleaseService) Create(ctx context.Context, projectID int64, in release.Input) (release.Created, error) {
	f := newReleaseFields{TagName: in.TagName, Description: &in.Description, Ref: in.Ref, ReleasedAt: in.ReleasedAt}
	if in.Name != "" {
		f.Name = &in.Name
	}
	if in.TagMessage != "" {
		f.TagMessage = &in.TagMessage
	}
	for _, l := range in.Links {
		f.Links = append(f.Links, linkFields{Name: l.Name, URL: l.URL, LinkType: l.LinkType})
	}
	st, err := s.w.CreateRelease(ctx, strconv.FormatInt(projectID, 10), f)
	if err != nil {
		return release.Created{}, releaseRefusal(err)
	}
	return release.Created{TagName: st.Release.TagName, CommitID: st.Release.SHA, Links: len(st.Links)}, nil
}

// releaseRefusal is err in the contract's terms, with the words the
// releases API answers it with (httperrors.go).
func releaseRefusal(err error) error {
	var (
		tag    *releaseTagRefusal
		links  *linksInvalidError
		inv    *invalidError
		fields *fieldsInvalidError
	)
	reason := ""
	switch {
	case errors.Is(err, errReleaseExists):
		return release.ErrExists
	case errors.Is(err, errRefNotSpecified):
		reason = "Ref is not specified"
	case errors.As(err, &tag):
		reason = tag.reason
	case errors.As(err, &links):
		reason = strings.Join(links.msgs, ", ")
	case errors.As(err, &inv):
		reason = inv.msg
	case errors.As(err, &fields):
		keys := make([]string, 0, len(fields.fields))
		for k := range fields.fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			reason += k + " " + strings.Join(fields.fields[k], ", ")
		}
	case errors.Is(err, projects.ErrForbidden):
		reason = "403 Forbidden"
	case errors.Is(err, projects.ErrNotFound):
		reason = "404 Project Not Found"
	case errors.Is(err, ErrTagNotFound), errors.Is(err, ErrCommitNotFound):
		reason = "404 Tag Not Found"
	default:
		return err
	}
	return &release.RefusedError{Reason: reason}
}
