package api

// Domain errors inside, HTTP at the edge. A module's services return plain
// sentinel errors (projects.ErrNotFound, wrapped with %w as they travel);
// the module tells its API once, when it registers its routes, which GitLab
// answer each one gets (MapError). Every path that turns an error into a
// response (operations, the request pipeline, raw handlers through
// WriteError) asks the same table, so a sentinel returned three modules away
// from where it was born still answers "404 Project Not Found", and no caller
// ever reads a status back out of an error to decide what happened: callers
// decide with errors.Is on the sentinel.

import (
	"errors"
	"net/http"
	"sync"

	"go.uber.org/zap"
)

// errorMapping is one row of an API's table from domain errors to answers.
type errorMapping struct {
	target  error
	respond func(error) *Error
}

// errorTable holds an API's mappings. Modules add rows while they register
// routes, before the server serves; the lock only keeps a late embedder's
// registration from racing with requests.
type errorTable struct {
	mu   sync.RWMutex
	rows []errorMapping
}

// MapError makes every error that errors.Is target answer respond(err). It
// is how a module turns its domain errors into GitLab bodies, once:
//
//	a.MapError(ErrNotFound, func(error) *api.Error { return api.NotFound("Project") })
//
// respond builds a new *Error on every call (the constructors of this
// package do), so no response value is ever shared between requests; it
// receives the whole error chain, for answers that carry a detail of it.
// Rows are tried in the order they were added, after an *Error found in the
// chain and before the core's own table (auth and store errors).
func (a *API) MapError(target error, respond func(err error) *Error) {
	if target == nil || respond == nil {
		panic("api: MapError needs a target error and a respond func")
	}
	a.errors.mu.Lock()
	defer a.errors.mu.Unlock()
	a.errors.rows = append(a.errors.rows, errorMapping{target: target, respond: respond})
}

// ErrorResponse is the GitLab answer for err: an *Error in its chain as it
// is, else the first mapped domain error, else the core's table (auth,
// store, deadlines). ok is false for an error nobody mapped: a 500 whose
// detail belongs in the log.
func (a *API) ErrorResponse(err error) (resp *Error, ok bool) {
	if err == nil {
		return nil, false
	}
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	a.errors.mu.RLock()
	rows := a.errors.rows
	a.errors.mu.RUnlock()
	for _, m := range rows {
		if errors.Is(err, m.target) {
			if e := m.respond(err); e != nil {
				return e, true
			}
		}
	}
	return coreResponse(err)
}

// WriteError answers err in GitLab's shape from a raw handler (one mounted
// with Mount or Intercept), with the same table as operations: a mapped
// error gets its body, headers included, anything else a logged 500.
func (a *API) WriteError(w http.ResponseWriter, err error) {
	e, ok := a.ErrorResponse(err)
	if !ok {
		a.log.Error("request failed", zap.Error(err))
		e = Internal()
	}
	for k, values := range e.Header {
		for _, v := range values {
			w.Header().Add(k, v)
		}
	}
	WriteJSON(w, e.Status, e)
}
