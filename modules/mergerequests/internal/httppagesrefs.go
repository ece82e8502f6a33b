package internal

import (
	"context"
	"strconv"

	"github.com/fennec-forge/fennec/core/markup"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// registerReferences makes "!12" in the Markdown of any page a link to
// merge request 12 of its project when the viewer may see it: the answer is the API's own
// (Service.Get, with its permission rules), so a page never links, or
// titles, what the API would hide from the same visitor.
func registerReferences(site *web.Site, s *Service) {
	site.AddReferences(markup.MergeRequest, func(ctx context.Context, ref markup.Reference) (bool, string) {
		n, err := strconv.ParseInt(ref.ID, 10, 64)
		if err != nil || n <= 0 {
			return false, ""
		}
		got, err := s.Get(ctx, mergerequest.Ref{Project: ref.Project, IID: mergerequest.IID(n)})
		if err != nil {
			return false, ""
		}
		return true, got.Title
	})
}
