package internal

import (
	"context"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/markup"
	"github.com/fennec-forge/fennec/core/web"
)

// NewReferencePages makes "@name" in the Markdown of any page a link to
// that user's profile, titled with their name, when the account exists
// (profiles are public, as in GitLab 9.x); an unknown name stays text.
func NewReferencePages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "identity-references", Register: func(site *web.Site) {
		site.AddReferences(markup.User, func(ctx context.Context, ref markup.Reference) (bool, string) {
			u, err := s.UserByUsername(ctx, ref.ID)
			if err != nil {
				return false, ""
			}
			return true, u.Name
		})
	}}
}
