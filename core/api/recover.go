package api

import (
	"errors"
	"net/http"
	"runtime/debug"

	"go.uber.org/zap"
)

// recoverer turns a panic in any handler into a logged 500 with GitLab's body
// (if nothing was sent yet), so one bad request never takes the server down.
func (a *API) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if err, ok := rec.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(rec) // the server's own signal to drop the connection
			}
			a.log.Error("panic while serving request",
				zap.Any("panic", rec), zap.String("method", r.Method),
				zap.String("path", r.URL.EscapedPath()), zap.ByteString("stack", debug.Stack()))
			WriteJSON(w, http.StatusInternalServerError, Internal())
		}()
		next.ServeHTTP(w, r)
	})
}
