package internal

// Project snippets: /projects/:id/snippets. The caller must read the
// project with its snippets feature on (projects.ReadSnippets) before
// anything else is looked at, so a project they may not see answers alike
// whatever else is wrong.

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// projectSnippet loads a snippet of the project that the caller may see.
func projectSnippet(tx *store.Tx, p *auth.Principal, info projects.ProjectInfo, id snippet.ID) (*Snippet, error) {
	if id <= 0 {
		return nil, snippet.ErrNotFound
	}
	sn, err := snippets.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sn.ProjectID != info.ID || !canRead(p, info.MemberLevel, sn))) {
		return nil, snippet.ErrNotFound
	}
	return sn, err
}

// canChange is update_project_snippet / admin_project_snippet: the author,
// or a Master of the project (an administrator acts as Owner), and never
// on an archived project.
func canChange(p *auth.Principal, info projects.ProjectInfo, sn *Snippet) bool {
	if info.Archived {
		return false
	}
	return info.Level >= projects.Master || (!p.IsAnonymous() && p.UserID() == sn.AuthorID)
}

// ProjectSnippets implements snippet.Service.
func (s *Service) ProjectSnippets(ctx context.Context, project string, offset, limit int) ([]snippet.Snippet, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadSnippets)
	if err != nil {
		return nil, 0, err
	}
	var list []*Snippet
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := visibleIDs(tx, auth.FromContext(ctx), info.ID, info.MemberLevel)
		if err != nil {
			return err
		}
		total = len(ids)
		list, err = page(tx, ids, offset, limit)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return records(list, info.WebURL), total, nil
}

// ProjectSnippet implements snippet.Service.
func (s *Service) ProjectSnippet(ctx context.Context, project string, id snippet.ID) (snippet.Snippet, error) {
	sn, _, err := s.readProjectSnippet(ctx, project, id, false)
	return sn, err
}

// ProjectSnippetContent implements snippet.Service.
func (s *Service) ProjectSnippetContent(ctx context.Context, project string, id snippet.ID) (snippet.Snippet, []byte, error) {
	return s.readProjectSnippet(ctx, project, id, true)
}

// readProjectSnippet reads a snippet, and its content when withContent.
func (s *Service) readProjectSnippet(ctx context.Context, project string, id snippet.ID, withContent bool) (snippet.Snippet, []byte, error) {
	info, err := s.access.Require(ctx, project, projects.ReadSnippets)
	if err != nil {
		return snippet.Snippet{}, nil, err
	}
	var sn *Snippet
	var body []byte
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = projectSnippet(tx, auth.FromContext(ctx), info, id); err != nil {
			return err
		}
		if withContent {
			body = content(tx, sn.ID)
		}
		return nil
	})
	if err != nil {
		return snippet.Snippet{}, nil, err
	}
	return record(sn, info.WebURL), body, nil
}

// CreateProjectSnippet implements snippet.Service.
func (s *Service) CreateProjectSnippet(ctx context.Context, project string, f snippet.Fields) (snippet.Snippet, error) {
	info, err := s.access.Require(ctx, project, projects.CreateSnippet)
	if err != nil {
		return snippet.Snippet{}, err
	}
	err = missing(param{"title", f.Title != nil}, param{"file_name", f.FileName != nil},
		param{"code", f.Content != nil}, param{"visibility", f.Visibility != nil})
	if err != nil {
		return snippet.Snippet{}, err
	}
	if err := check(f); err != nil {
		return snippet.Snippet{}, err
	}
	sn, err := s.create(ctx, info.ID, f)
	if err != nil {
		return snippet.Snippet{}, err
	}
	return record(sn, info.WebURL), nil
}

// UpdateProjectSnippet implements snippet.Service.
func (s *Service) UpdateProjectSnippet(ctx context.Context, project string, id snippet.ID, f snippet.Fields) (snippet.Snippet, error) {
	info, err := s.access.Require(ctx, project, projects.ReadSnippets)
	if err != nil {
		return snippet.Snippet{}, err
	}
	if err := nothingGiven(f, "title", "file_name", "code", "visibility"); err != nil {
		return snippet.Snippet{}, err
	}
	p := auth.FromContext(ctx)
	var sn *Snippet
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = projectSnippet(tx, p, info, id); err != nil {
			return err
		}
		if !canChange(p, info, sn) {
			return projects.ErrForbidden
		}
		// Checked after the permission, so a caller who may not change
		// the snippet learns nothing from a validation answer.
		if err := check(f); err != nil {
			return err
		}
		return apply(tx, sn, f, s.now())
	})
	if err != nil {
		return snippet.Snippet{}, err
	}
	return record(sn, info.WebURL), nil
}

// DeleteProjectSnippet implements snippet.Service. It is idempotent as the
// spec has it: a snippet that is not there (or that the caller may not
// see, which is the same to them) is nothing deleted, not an error; one
// they see but may not change is projects.ErrForbidden.
func (s *Service) DeleteProjectSnippet(ctx context.Context, project string, id snippet.ID) (*snippet.Snippet, error) {
	info, err := s.access.Require(ctx, project, projects.ReadSnippets)
	if err != nil {
		return nil, err
	}
	p := auth.FromContext(ctx)
	var deleted *Snippet
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		deleted = nil
		sn, err := projectSnippet(tx, p, info, id)
		if errors.Is(err, snippet.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !canChange(p, info, sn) {
			return projects.ErrForbidden
		}
		if err := s.remove(tx, sn.ID); err != nil {
			return err
		}
		deleted = sn
		return nil
	})
	if err != nil || deleted == nil {
		return nil, err
	}
	r := record(deleted, info.WebURL)
	return &r, nil
}
