package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	json "github.com/go-json-experiment/json/v1"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// Error is a GitLab-shaped error response. Exactly one of Message (any JSON
// value: a string, or a field -> texts map) and Err (a string, rendered under
// "error") is set.
type Error struct {
	Status  int
	Message any
	Err     string
	Header  http.Header
}

func (e *Error) Error() string {
	if e.Err != "" {
		return e.Err
	}
	if s, ok := e.Message.(string); ok {
		return s
	}
	b, _ := json.Marshal(e.Message)
	return string(b)
}

// GetStatus implements huma.StatusError.
func (e *Error) GetStatus() int { return e.Status }

// GetHeaders implements huma.HeadersError. Error values are shared by
// concurrent requests (package-level errors such as a 404), so this never
// writes into e: without headers it hands out a fresh empty map.
func (e *Error) GetHeaders() http.Header {
	if e.Header == nil {
		return http.Header{}
	}
	return e.Header
}

// MarshalJSON renders {"message":...} or {"error":...}.
func (e *Error) MarshalJSON() ([]byte, error) {
	if e.Err != "" {
		return json.Marshal(struct {
			Error string `json:"error"`
		}{e.Err})
	}
	return json.Marshal(struct {
		Message any `json:"message"`
	}{e.Message})
}

// Constructors for the bodies of API-CONVENTIONS.md.

// NotFound is 404 {"message":"404 <thing> Not Found"}; an empty thing gives
// "404 Not Found".
func NotFound(thing string) *Error {
	if thing == "" {
		return &Error{Status: 404, Message: "404 Not Found"}
	}
	return &Error{Status: 404, Message: "404 " + thing + " Not Found"}
}

// RecordNotFound is 404 {"message":"404 Not found"}, lower-case "found":
// GitLab 9.x's answer where a find(id) missed unhandled (hooks, issues by
// iid, milestones), unlike NotFound's "404 <thing> Not Found".
func RecordNotFound() *Error { return &Error{Status: 404, Message: "404 Not found"} }

// Unauthorized is 401 {"message":"401 Unauthorized"}.
func Unauthorized() *Error { return &Error{Status: 401, Message: "401 Unauthorized"} }

// Forbidden is 403 {"message":"403 Forbidden"} or "403 Forbidden - <reason>".
func Forbidden(reason string) *Error {
	if reason == "" {
		return &Error{Status: 403, Message: "403 Forbidden"}
	}
	return &Error{Status: 403, Message: "403 Forbidden - " + reason}
}

// BadRequest is 400 {"message":msg}: a service rule was broken.
func BadRequest(msg string) *Error { return &Error{Status: 400, Message: msg} }

// Missing is 400 {"error":"a, b is missing"} for absent required parameters
// (Grape joins several with ", ").
func Missing(params ...string) *Error {
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p + " is missing"
	}
	return &Error{Status: 400, Err: strings.Join(parts, ", ")}
}

// Invalid is 400 {"error":"<param> is invalid"}.
func Invalid(param string) *Error { return &Error{Status: 400, Err: param + " is invalid"} }

// NotValidValue is 400 {"error":"<param> does not have a valid value"}.
func NotValidValue(param string) *Error {
	return &Error{Status: 400, Err: param + " does not have a valid value"}
}

// AtLeastOne is 400 for a rule over several parameters.
func AtLeastOne(params ...string) *Error {
	return &Error{Status: 400, Err: strings.Join(params, ", ") + " are missing, at least one parameter must be provided"}
}

// Validation is 400 {"message":{"field":["text", ...]}} for a record that
// failed validation.
func Validation(fields map[string][]string) *Error { return &Error{Status: 400, Message: fields} }

// FieldErrors is a record that failed validation: field -> texts, rendered
// as 400 {"message":{"email":["has already been taken"]}}. Modules build it
// and return it as an error; the error table renders it.
type FieldErrors map[string][]string

func (f FieldErrors) Error() string {
	b, _ := json.Marshal(map[string][]string(f))
	return "validation failed: " + string(b)
}

// Fields returns the field -> texts map.
func (f FieldErrors) Fields() map[string][]string { return f }

// Add appends a text to a field.
func (f FieldErrors) Add(field, text string) { f[field] = append(f[field], text) }

// Conflict is 409 {"message":msg}.
func Conflict(msg string) *Error { return &Error{Status: 409, Message: msg} }

// MethodNotAllowed is 405 {"message":"405 Method Not Allowed"} or a reason.
func MethodNotAllowed(msg string) *Error {
	if msg == "" {
		msg = "405 Method Not Allowed"
	}
	return &Error{Status: 405, Message: msg}
}

// NotAcceptable is 406 {"message":msg}.
func NotAcceptable(msg string) *Error { return &Error{Status: 406, Message: msg} }

// TooLarge is 413 {"message":"413 Request Entity Too Large"}.
func TooLarge() *Error { return &Error{Status: 413, Message: "413 Request Entity Too Large"} }

// TooManyRequests is 429 {"message":"429 Too Many Requests"} with a
// Retry-After header (seconds), GitLab's helper wording for its status.
func TooManyRequests(retryAfter string) *Error {
	return &Error{Status: 429, Message: "429 Too Many Requests", Header: http.Header{"Retry-After": {retryAfter}}}
}

// Internal is the 500 body; details belong in the log only.
func Internal() *Error { return &Error{Status: 500, Message: "500 Internal Server Error"} }

// StatusOnly is an error that carries just a status and no body, such as
// 304 Not Modified.
type StatusOnly int

func (s StatusOnly) Error() string  { return http.StatusText(int(s)) }
func (s StatusOnly) GetStatus() int { return int(s) }

// NotModified is the 304 answer (no body).
const NotModified = StatusOnly(http.StatusNotModified)

// coreResponse maps the errors the core itself defines (core/auth,
// core/store, validation fields, deadlines) to the GitLab error the client
// sees. Modules' domain errors are mapped by the rows they add with
// MapError; API.ErrorResponse asks those first and this table last.
func coreResponse(err error) (*Error, bool) {
	var forbidden *auth.ForbiddenError
	var sudo *auth.SudoNotFoundError
	var throttled *auth.ThrottledError
	var conflict *store.ConflictError
	var fields interface{ Fields() map[string][]string }
	switch {
	case errors.As(err, &fields):
		return Validation(fields.Fields()), true
	case errors.As(err, &throttled): // before ErrUnauthorized, which it also matches
		return TooManyRequests(throttled.RetryAfterSeconds()), true
	case errors.Is(err, auth.ErrProviderUnavailable):
		return &Error{Status: 503, Message: "503 Service Unavailable - a sign-in provider is restarting; try again shortly",
			Header: http.Header{"Retry-After": {"2"}}}, true
	case errors.Is(err, auth.ErrUnauthorized), errors.Is(err, auth.ErrInvalidPassword):
		return Unauthorized(), true
	case errors.As(err, &forbidden):
		return Forbidden(forbidden.Reason), true
	case errors.As(err, &sudo):
		return NotFound("No user id or username for: " + sudo.Value), true
	case errors.Is(err, auth.ErrUserNotFound):
		return NotFound("User"), true
	case errors.Is(err, store.ErrNotFound):
		return NotFound(""), true
	case errors.As(err, &conflict):
		return Validation(map[string][]string{conflict.Index: {"has already been taken"}}), true
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: 503, Message: "503 Service Unavailable"}, true
	case errors.Is(err, store.ErrUnavailable):
		return &Error{Status: 503, Message: "503 Service Unavailable - the database cannot be reached; try again shortly",
			Header: http.Header{"Retry-After": {"1"}}}, true
	case errors.Is(err, store.ErrConflictRetry):
		// Writers on several nodes kept colliding and the engine gave up:
		// nothing was written, and the same request shortly after succeeds.
		return &Error{Status: 503, Message: "503 Service Unavailable - too many concurrent writes; try again shortly",
			Header: http.Header{"Retry-After": {"1"}}}, true
	}
	return nil, false
}

// withHeaders puts e's headers (a 429's Retry-After) on the response: Huma
// copies them only from an error a handler returned itself, not from one
// mapped here or written by the middleware.
func withHeaders(ctx huma.Context, e *Error) *Error {
	for k, values := range e.Header {
		for i, v := range values {
			if i == 0 {
				ctx.SetHeader(k, v)
			} else {
				ctx.AppendHeader(k, v)
			}
		}
	}
	return e
}

// errorHook replaces huma.NewErrorWithContext for Fennec operations: Huma's
// validation errors become Grape-worded 400s, 413 gets GitLab's body, and
// plain handler errors go through the operation's API error table
// (ErrorResponse) or become a logged 500.
func errorHook(prev func(huma.Context, int, string, ...error) huma.StatusError) func(huma.Context, int, string, ...error) huma.StatusError {
	return func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		if ctx == nil || ctx.Operation() == nil {
			return prev(ctx, status, msg, errs...)
		}
		meta, ok := ctx.Operation().Metadata[metaKey].(*opMeta)
		if !ok {
			return prev(ctx, status, msg, errs...)
		}
		for _, err := range errs {
			var e *Error
			if errors.As(err, &e) {
				return withHeaders(ctx, e) // already GitLab-shaped (our own middleware's errors)
			}
		}
		switch {
		case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest:
			return grapeError(errs, msg)
		case status == http.StatusRequestEntityTooLarge:
			return TooLarge()
		case status == http.StatusRequestTimeout:
			return &Error{Status: 408, Message: "408 Request Timeout"}
		case status == http.StatusNotAcceptable:
			return NotAcceptable("406 Not Acceptable")
		}
		for _, err := range errs {
			if e, ok := meta.api.ErrorResponse(err); ok {
				return withHeaders(ctx, e)
			}
		}
		fields := []zap.Field{zap.Int("status", status), zap.String("operation", ctx.Operation().OperationID), zap.String("detail", msg)}
		for _, err := range errs {
			fields = append(fields, zap.Error(err))
		}
		meta.api.log.Error("request failed", fields...)
		if status >= 500 {
			return Internal()
		}
		return &Error{Status: status, Message: fmt.Sprintf("%d %s", status, http.StatusText(status))}
	}
}

// grapeError words Huma's validation details the way Grape does:
// "title is missing", "per_page is invalid" (also for a pattern mismatch, as
// Grape's regexp validator says), "visibility does not have a valid value"
// (enums), joined with ", ".
func grapeError(errs []error, msg string) *Error {
	missing := []string{}
	other := []string{}
	seen := map[string]bool{}
	for _, err := range errs {
		var d *huma.ErrorDetail
		if !errors.As(err, &d) {
			if err != nil {
				other = append(other, err.Error())
			}
			continue
		}
		name := paramName(d.Location)
		m := d.Message
		switch {
		case strings.HasPrefix(m, "expected required property "):
			// Location is the parent object; the property is in the message.
			prop := strings.TrimSuffix(strings.TrimPrefix(m, "expected required property "), " to be present")
			if name != "" {
				prop = name + "[" + prop + "]"
			}
			if !seen[prop+"m"] {
				seen[prop+"m"] = true
				missing = append(missing, prop+" is missing")
			}
		case strings.Contains(m, "required") && strings.Contains(m, "missing"):
			if !seen[name+"m"] {
				seen[name+"m"] = true
				missing = append(missing, name+" is missing")
			}
		case strings.HasPrefix(m, "expected value to be one of"):
			if !seen[name+"v"] {
				seen[name+"v"] = true
				other = append(other, name+" does not have a valid value")
			}
		default:
			if name == "" {
				other = append(other, "body is invalid")
				continue
			}
			if !seen[name+"i"] {
				seen[name+"i"] = true
				other = append(other, name+" is invalid")
			}
		}
	}
	all := append(missing, other...)
	if len(all) == 0 {
		if msg == "" || msg == "validation failed" {
			msg = "400 Bad request"
		}
		return BadRequest(msg)
	}
	return &Error{Status: 400, Err: strings.Join(dedupe(all), ", ")}
}

// paramName turns Huma's "body.actions[0].file_path" or "query.per_page" into
// the Grape-style name "actions[file_path]" / "per_page".
func paramName(loc string) string {
	for _, p := range []string{"body.", "query.", "path.", "header.", "body"} {
		if strings.HasPrefix(loc, p) {
			loc = strings.TrimPrefix(loc, p)
			break
		}
	}
	if loc == "" {
		return ""
	}
	parts := strings.Split(loc, ".")
	out := parts[0]
	for _, p := range parts[1:] {
		out += "[" + p + "]"
	}
	// Array indexes are not part of Grape names: a[0][b] -> a[b].
	for {
		i := strings.Index(out, "[")
		if i < 0 {
			break
		}
		j := strings.Index(out[i:], "]")
		if j < 0 {
			break
		}
		idx := out[i+1 : i+j]
		if idx == "" || strings.Trim(idx, "0123456789") != "" {
			break
		}
		out = out[:i] + out[i+j+1:]
	}
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// sortedKeys is a helper for stable error texts.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
