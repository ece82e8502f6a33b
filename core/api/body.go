package api

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	json "github.com/go-json-experiment/json/v1"
)

// minBodyRate is the slowest a request body may keep arriving once its first
// BodyReadTimeout is used up: each byte received earns the sender 1/minBodyRate
// seconds more. A 10 MiB body gets 30 s + 320 s, which a slow but honest
// link meets, while a client trickling a few bytes a second is cut off
// after BodyReadTimeout.
const minBodyRate = 32 << 10 // bytes per second

// timedBody keeps a read deadline on the connection for as long as a
// request body may still be read, including the part net/http reads itself
// after the handler (it discards up to 256 KiB of an unread body before it
// writes the response, and without a deadline a slow client holds that
// forever). The deadline is lifted once the body has been read to its end;
// a read that fails marks the response "Connection: close", since what is
// left of the body on the wire cannot be skipped reliably.
type timedBody struct {
	io.ReadCloser
	w        http.ResponseWriter
	start    time.Time
	base     time.Duration
	n        int64
	deadline time.Time
	failed   bool
}

// guardBody puts r's body under a read deadline (see timedBody). Requests
// without a body and writers that cannot hold a deadline are left alone.
func (a *API) guardBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	b := &timedBody{ReadCloser: r.Body, w: w, start: time.Now(), base: a.bodyTime}
	b.deadline = b.start.Add(b.base)
	if huma.SetReadDeadline(w, b.deadline) != nil {
		return
	}
	r.Body = b
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		// The whole body is in. net/http now watches the connection in the
		// background for the client going away; a deadline left behind
		// would fire there and cancel the request's context.
		_ = huma.SetReadDeadline(b.w, time.Time{})
	case err != nil:
		if !b.failed {
			b.failed = true
			b.w.Header().Set("Connection", "close")
		}
	case n > 0:
		earned := time.Duration(float64(b.n) / minBodyRate * float64(time.Second))
		// Move the deadline in steps of a second or more, not on every read.
		if d := b.start.Add(b.base + earned); d.Sub(b.deadline) >= time.Second {
			b.deadline = d
			_ = huma.SetReadDeadline(b.w, d)
		}
	}
	return n, err
}

// credentialPeekBytes is how much of a body is read, at most, before a
// caller is known on an operation that needs one. A request that carries its
// token only in the body (private_token=...) keeps working when the token is
// within the first credentialPeekBytes; anything larger without credentials
// in the headers or the query string is refused unread.
const credentialPeekBytes = 64 << 10

// credentialKeys are the body parameters that can carry credentials.
var credentialKeys = map[string]bool{"private_token": true, "access_token": true, "sudo": true}

// peekParams finds credential parameters in the first bytes of a body
// (prefix is cut anywhere, mid-value too): complete urlencoded pairs, the
// top-level keys of a JSON object up to where it is cut, and the complete
// text parts of a multipart body. Everything else is ignored.
func peekParams(contentType string, prefix []byte) map[string]any {
	out := map[string]any{}
	mt, params, err := mime.ParseMediaType(contentType)
	if contentType == "" {
		mt, err = "application/x-www-form-urlencoded", nil
		if t := bytes.TrimSpace(prefix); len(t) > 0 && t[0] == '{' {
			mt = "application/json"
		}
	}
	if err != nil {
		return out
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		dec := json.NewDecoder(bytes.NewReader(prefix))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return out
		}
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			if err != nil || !ok {
				return out
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return out
			}
			var s string
			if credentialKeys[key] && json.Unmarshal(v, &s) == nil {
				out[key] = s
			}
		}
	case mt == "application/x-www-form-urlencoded":
		if i := bytes.LastIndexByte(prefix, '&'); i >= 0 {
			prefix = prefix[:i] // the last pair may be cut short
		} else {
			prefix = nil
		}
		for _, p := range queryPairs(string(prefix)) {
			if credentialKeys[p[0]] {
				out[p[0]] = p[1]
			}
		}
	case mt == "multipart/form-data" && params["boundary"] != "":
		mr := multipart.NewReader(bytes.NewReader(prefix), params["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				return out
			}
			name := part.FormName()
			if part.FileName() != "" || !credentialKeys[name] {
				part.Close()
				continue
			}
			v, err := io.ReadAll(part)
			part.Close()
			if err != nil {
				return out // cut inside this part
			}
			out[name] = string(v)
		}
	}
	return out
}
