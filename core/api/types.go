package api

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/isotime"

	"github.com/danielgtaylor/huma/v2"
	json "github.com/go-json-experiment/json/v1"

	flog "github.com/fennec-forge/fennec/core/log"
)

// Time renders as GitLab does: UTC with milliseconds,
// "2017-05-24T10:14:38.000Z". Use *Time for nullable fields. It is a named
// type, not a struct embedding time.Time, so time.Time's own MarshalJSON is
// not promoted over MarshalText.
type Time time.Time

// NewTime wraps t.
func NewTime(t time.Time) Time { return Time(t) }

// TimePtr wraps t, or returns nil for the zero time (rendered as null).
func TimePtr(t time.Time) *Time {
	if t.IsZero() {
		return nil
	}
	v := Time(t)
	return &v
}

const timeLayout = "2006-01-02T15:04:05.000Z"

// MarshalText (not MarshalJSON: encoding/json re-validates the output of a
// JSON marshaler, which cost ~2% of a whole request).
func (t Time) MarshalText() ([]byte, error) {
	return flog.AppendTimestamp(make([]byte, 0, len(timeLayout)), time.Time(t)), nil
}

func (t *Time) UnmarshalText(b []byte) error {
	parsed, err := ParseTime(string(b))
	if err != nil {
		return err
	}
	*t = Time(parsed)
	return nil
}

// Schema implements huma.SchemaProvider.
func (Time) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "string", Format: "date-time", Examples: []any{"2017-05-24T10:14:38.000Z"}}
}

// GitTime renders a git date in the commit's own offset with milliseconds,
// "2012-09-20T09:06:12.000+03:00", as GitLab shows commit dates.
type GitTime time.Time

func (t GitTime) MarshalText() ([]byte, error) {
	return time.Time(t).AppendFormat(make([]byte, 0, 29), "2006-01-02T15:04:05.000-07:00"), nil
}

func (t *GitTime) UnmarshalText(b []byte) error {
	parsed, err := ParseTime(string(b))
	if err != nil {
		return err
	}
	*t = GitTime(parsed)
	return nil
}

// Schema implements huma.SchemaProvider.
func (GitTime) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "string", Format: "date-time", Examples: []any{"2012-09-20T09:06:12.000+03:00"}}
}

// Date renders as "YYYY-MM-DD". Use *Date for nullable fields.
type Date time.Time

// DatePtr wraps t, or returns nil for the zero time (rendered as null).
func DatePtr(t time.Time) *Date {
	if t.IsZero() {
		return nil
	}
	v := Date(t)
	return &v
}

func (d Date) MarshalText() ([]byte, error) {
	return time.Time(d).AppendFormat(make([]byte, 0, 10), "2006-01-02"), nil
}

func (d *Date) UnmarshalText(b []byte) error {
	parsed, err := ParseTime(string(b))
	if err != nil {
		return err
	}
	*d = Date(parsed)
	return nil
}

// Schema implements huma.SchemaProvider. No "date" format: input accepts
// any ISO 8601 date or time (client-go sends expires_at as a full time), and
// output is always YYYY-MM-DD.
func (Date) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "string", Description: "YYYY-MM-DD (any ISO 8601 date or time accepted)",
		Pattern: `^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$`, Examples: []any{"2017-05-24"}}
}

// ParseTime accepts the ISO 8601 forms clients send: dates, date-times with
// or without fractions, zones as Z or offsets.
func ParseTime(s string) (time.Time, error) { return isotime.Parse(s) }

// ParseID splits a path :id into a number or a path (URL-decoded already by
// the router): "42" -> (42, ""), "group/sub/project" -> (0, "group/sub/project").
func ParseID(s string) (id int64, path string) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && !strings.HasPrefix(s, "+") {
		return n, ""
	}
	return 0, s
}

// WriteJSON writes v as the JSON response with status, outside Huma.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"message":"500 Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// jsonFormat is Huma's JSON format on the faster implementation of
// encoding/json's own behaviour (github.com/go-json-experiment/json/v1, the
// engine of Go's encoding/json/v2 behind the v1 API): the same bytes out and
// the same values in, for a fraction of the decoding time, which every
// request body and every response pays.
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	},
	Unmarshal: json.Unmarshal,
}
