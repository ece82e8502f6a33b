package log

import (
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// RequestInfo is filled in while a request is handled and read when it ends.
type RequestInfo struct {
	// Operation names what handled the request ("get-user", "git", ...).
	Operation string
	// UserID is the authenticated user, 0 for anonymous.
	UserID int64
	// Status is the response status, 200 when nothing was written explicitly.
	Status int
	// Bytes counts the response body.
	Bytes int64
}

// Info returns the RequestInfo of the request being answered through w, or a
// throwaway one when the request did not pass through Middleware (so callers
// never check nil). It is found by unwrapping w rather than in the request
// context, which would cost a copy of the request per request.
func Info(w http.ResponseWriter) *RequestInfo {
	for w != nil {
		if rec, ok := w.(*recorder); ok {
			return &rec.ri
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return &RequestInfo{}
}

// Observer is called after every request with its info and duration.
type Observer func(r *http.Request, info *RequestInfo, took time.Duration)

// Middleware puts a RequestInfo into each request, logs one line per request
// when it is done, and calls the observers (metrics).
func Middleware(l *zap.Logger, next http.Handler, observers ...Observer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w} // carries the RequestInfo too
		ri := &rec.ri
		next.ServeHTTP(rec, r)
		if ri.Status == 0 {
			ri.Status = http.StatusOK
		}
		took := time.Since(start)
		for _, o := range observers {
			o(r, ri, took)
		}
		if ce := l.Check(zap.InfoLevel, "request"); ce != nil {
			// A pooled array: the variadic slice would otherwise escape and
			// cost 512 bytes of garbage per request.
			fs := fieldPool.Get().(*[8]zap.Field)
			fs[0] = zap.String("method", r.Method)
			fs[1] = zap.String("path", r.URL.EscapedPath())
			fs[2] = zap.Int("status", ri.Status)
			fs[3] = zap.Duration("duration", took)
			fs[4] = zap.String("operation", ri.Operation)
			fs[5] = zap.Int64("user_id", ri.UserID)
			fs[6] = zap.Int64("bytes", ri.Bytes)
			fs[7] = zap.String("remote", r.RemoteAddr)
			ce.Write(fs[:]...)
			*fs = [8]zap.Field{}
			fieldPool.Put(fs)
		}
	})
}

var fieldPool = sync.Pool{New: func() any { return new([8]zap.Field) }}

// recorder captures the status and size; Unwrap keeps http.ResponseController
// (flush, deadlines) working through it.
type recorder struct {
	http.ResponseWriter
	ri    RequestInfo
	wrote bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.ri.Status = code
		r.wrote = code >= 200
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wrote {
		r.wrote = true
		if r.ri.Status == 0 {
			r.ri.Status = http.StatusOK
		}
	}
	n, err := r.ResponseWriter.Write(p)
	r.ri.Bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
