package internal

import (
	"context"
	"net/url"
	"strconv"

	"github.com/fennec-forge/fennec/core/web"
)

// branchMergeRequests answers web.Site.BranchMergeRequests for pages of
// the modules below this one (a branch pipeline's page).
func (pg *mrPages) branchMergeRequests(ctx context.Context, projectID int64, branch string) []web.MergeRequestLink {
	found, err := pg.s.OpenFromBranch(ctx, projectID, branch, maxBranchMergeRequests)
	if err != nil {
		return nil
	}
	links := make([]web.MergeRequestLink, 0, len(found))
	for _, m := range found {
		label := "!" + strconv.FormatInt(m.IID, 10)
		if m.Target.ID != projectID {
			label = m.Target.PathWithNamespace + label
		}
		links = append(links, web.MergeRequestLink{Label: label, Title: m.Title,
			Href: pg.site.URL("/" + web.EscapePath(m.Target.PathWithNamespace) + "/-/merge_requests/" + url.PathEscape(strconv.FormatInt(m.IID, 10)))})
	}
	return links
}
