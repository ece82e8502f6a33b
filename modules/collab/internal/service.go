package internal

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Service keeps notes, counts, subscriptions, awards and todos
// (target.Service) over the one registry of target kinds, and serves their
// operations for every registered kind.
type Service struct {
	db     *store.DB
	log    *zap.Logger
	bus    *events.Bus
	access projects.Access
	users  identity.Users
	// byType is the registry, by target type; noteKinds are the kinds that
	// have notes (a Path, a Param and Resolve), in registration order, for
	// the routes.
	byType    map[string]target.Kind
	noteKinds []target.Kind
	// present renders what the service stores rendered (a feed entry's
	// note); the HTTP adapter sets it (SetPresenter).
	present Presenter
	// kindsOnce guards SetKinds, called by the routes' constructors and
	// by an invoke, whichever fx runs first.
	kindsOnce sync.Once
	now       func() time.Time
}

var _ target.Service = (*Service)(nil)

// NewService builds the service. The kinds come later (SetKinds): the
// modules that register them build their own services from this one, so a
// kind's constructor may depend on what depends on target.Service.
func NewService(db *store.DB, log *zap.Logger, bus *events.Bus, access projects.Access, users identity.Users) *Service {
	return &Service{db: db, log: log, bus: bus, access: access, users: users,
		byType: map[string]target.Kind{}, now: time.Now}
}

// SetKinds takes the target kinds the modules registered
// (collab.ProvideKinds), once, while the app is assembled (before it
// serves; nothing reads them concurrently then). A kind registered twice or
// without a type is left out with a warning, and so is the notes part of
// one that names a path without saying how to resolve it.
func (s *Service) SetKinds(kinds []target.Kind) {
	s.kindsOnce.Do(func() {
		for _, k := range kinds {
			if _, dup := s.byType[k.Type]; dup || k.Type == "" || k.Type == noteAwardable {
				s.log.Warn("collab: a target kind is registered twice or has no type; left out", zap.String("type", k.Type))
				continue
			}
			notes := k.Path != "" || k.Param != "" || k.Resolve != nil
			if notes && (k.Path == "" || k.Param == "" || k.Resolve == nil) {
				s.log.Warn("collab: a target kind's notes are incomplete; served without", zap.String("type", k.Type))
				k.Path, k.Param, k.Resolve = "", "", nil
				notes = false
			}
			s.byType[k.Type] = k
			if notes {
				s.noteKinds = append(s.noteKinds, k)
			}
		}
	})
}

// Presenter renders what the service must store already rendered, in the
// transaction of the change: the note of a "commented on" feed entry, as
// the events API shows it (GitLab keeps it so). The HTTP adapter is one.
type Presenter interface {
	// EventNote reads what it needs of the author before the write, and
	// renders the note once it is stored (it has its id then).
	EventNote(ctx context.Context, authorID int64) (func(*Note) (json.RawMessage, error), error)
}

// SetPresenter installs p, while the app is assembled (NewRoutes).
func (s *Service) SetPresenter(p Presenter) { s.present = p }

// noteKind is the kind of type typ when it has notes.
func (s *Service) noteKind(typ string) (target.Kind, bool) {
	k, ok := s.byType[typ]
	return k, ok && k.Resolve != nil
}
