package api

import (
	"io"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
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
