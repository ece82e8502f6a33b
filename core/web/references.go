package web

import (
	"context"
	"maps"
	"sync"

	"github.com/fennec-forge/fennec/core/markup"
)

// GitLab references in Markdown (#12, !3, $4, @name, a commit id) name
// things that live in different modules. Each module answers for its own
// kind (AddReferences, from its pages' Register), and pages hand markup the
// site's Resolver, which asks the module that registered the kind. A site
// without the issues module leaves "#12" as text, as it leaves out the
// module's pages.

// ReferenceFunc answers whether a reference names something the viewer
// in ctx may see, and the title its link shows. It is called with the
// page's request context, so it sees exactly what the API would show the
// same principal.
type ReferenceFunc func(ctx context.Context, ref markup.Reference) (ok bool, title string)

// maxReferenceLookups bounds the distinct references one rendering asks
// about: each is a lookup in a module's store, and a hostile text can hold
// thousands of "#n" or hex words. Those past the bound stay text.
const maxReferenceLookups = 200

// AddReferences makes f the answer for references of kind; a later call
// for the same kind replaces it.
func (s *Site) AddReferences(kind markup.RefKind, f ReferenceFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.references == nil {
		s.references = map[markup.RefKind]ReferenceFunc{}
	}
	s.references[kind] = f
}

// Resolver is the resolver for one page's renderings: page, when not nil,
// answers first (a page that knows its repository links commit ids
// itself), then the module registered for the reference's kind. It
// remembers each answer, so a text naming #12 ten times asks once, and
// stops asking after maxReferenceLookups distinct references. Nil when
// nobody answers, which leaves references as text.
func (s *Site) Resolver(page markup.Resolver) markup.Resolver {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.references) == 0 && page == nil {
		return nil
	}
	return &pageResolver{page: page, funcs: maps.Clone(s.references), seen: map[markup.Reference]answer{}}
}

type answer struct {
	ok    bool
	title string
}

type pageResolver struct {
	page  markup.Resolver
	funcs map[markup.RefKind]ReferenceFunc // a copy: registration may go on
	mu    sync.Mutex
	seen  map[markup.Reference]answer
}

func (p *pageResolver) Reference(ctx context.Context, ref markup.Reference) (bool, string) {
	f := p.funcs[ref.Kind]
	if f == nil && p.page == nil {
		return false, ""
	}
	p.mu.Lock()
	a, ok := p.seen[ref]
	full := len(p.seen) >= maxReferenceLookups
	p.mu.Unlock()
	if ok {
		return a.ok, a.title
	}
	if full {
		return false, ""
	}
	if p.page != nil {
		a.ok, a.title = p.page.Reference(ctx, ref)
	}
	if !a.ok && f != nil {
		a.ok, a.title = f(ctx, ref)
	}
	p.mu.Lock()
	p.seen[ref] = a
	p.mu.Unlock()
	return a.ok, a.title
}
