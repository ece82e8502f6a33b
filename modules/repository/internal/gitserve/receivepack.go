package gitserve

// The protocol half of receive-pack (stateless RPC): reading the command
// list that precedes the pack, and writing the report-status answer. What
// each command may do is the caller's policy.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// maxCommandBytes bounds the command list of one push (a mirror push of
// many refs stays well inside).
const maxCommandBytes = 32 << 20

// Command is one ref update a push asks for: create when Old is zero,
// delete when New is zero.
type Command struct {
	Old, New plumbing.Hash
	Ref      plumbing.ReferenceName
}

// PushRequest is a receive-pack request body: the commands, the
// capabilities of the first line, and the pack that follows.
type PushRequest struct {
	Commands []Command
	Caps     map[string]bool
	// Pack reads what follows the command list (the pack, when a command
	// is not a delete).
	Pack io.Reader
}

// ReadPushRequest reads the command list of r. No commands (git's "0000"
// probe before a large push, or an empty body) is not an error.
func ReadPushRequest(r io.Reader) (*PushRequest, error) {
	lr := &io.LimitedReader{R: r, N: maxCommandBytes}
	pr := newPktReader(lr)
	req := &PushRequest{Caps: map[string]bool{}}
	for {
		line, err := pr.next()
		switch {
		case errors.Is(err, io.EOF) && len(req.Commands) == 0:
			return req, nil
		case errors.Is(err, errFlush):
			// The pkt reader buffers ahead, so the pack starts in its
			// buffer; from here on the command limit no longer applies.
			lr.N = math.MaxInt64
			req.Pack = pr.r
			return req, nil
		case err != nil && lr.N <= 0:
			return nil, badRequest("the command list is too long")
		case err != nil:
			return nil, badRequest("malformed command list")
		}
		if len(req.Commands) == 0 {
			if i := bytes.IndexByte(line, 0); i >= 0 {
				for _, c := range strings.Fields(string(line[i+1:])) {
					req.Caps[c] = true
				}
				line = line[:i]
			}
		}
		if bytes.HasPrefix(line, []byte("shallow ")) {
			return nil, badRequest("pushes from shallow clones are not supported; fetch --unshallow first")
		}
		f := strings.Fields(string(line))
		if len(f) != 3 {
			return nil, badRequest("malformed command %s", strconv.Quote(string(line)))
		}
		old, ok1 := gitpack.ParseHex(f[0])
		nw, ok2 := gitpack.ParseHex(f[1])
		if !ok1 || !ok2 {
			return nil, badRequest("malformed command %s", strconv.Quote(string(line)))
		}
		req.Commands = append(req.Commands, Command{Old: old, New: nw, Ref: plumbing.ReferenceName(f[2])})
	}
}

// WritePushReport answers a push: messages first (shown by git as
// "remote: ..." lines; dropped without side-band), then, when the client
// asked for report-status, "unpack <unpack>" and per command "ok <ref>"
// or "ng <ref> <refusal>" (refusals[i] belongs to Commands[i], "" is ok).
func WritePushReport(w io.Writer, req *PushRequest, unpack string, refusals, messages []string) error {
	p := newPktWriter(w)
	mode := 0
	switch {
	case req.Caps["side-band-64k"]:
		mode = 2
	case req.Caps["side-band"]:
		mode = 1
	}
	sb := newSideband(p, mode)
	for _, m := range messages {
		sb.message(bandProgress, m+"\n")
	}
	if req.Caps["report-status"] {
		// The report is itself pkt-lines, carried on band 1 when
		// side-banded.
		var buf bytes.Buffer
		rp := &pktWriter{w: bufio.NewWriter(&buf)}
		rp.line("unpack " + unpack + "\n")
		for i, c := range req.Commands {
			if refusals[i] == "" {
				rp.line("ok " + c.Ref.String() + "\n")
			} else {
				rp.line("ng " + c.Ref.String() + " " + refusals[i] + "\n")
			}
		}
		rp.flushPkt()
		if err := rp.flush(); err != nil {
			return err
		}
		_, _ = sb.Write(buf.Bytes())
	}
	if mode > 0 {
		p.flushPkt()
	}
	return p.flush()
}
