package gitserve

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// infiniteDepth is what "git fetch --unshallow" sends as "deepen".
const infiniteDepth = 0x7fffffff

// wantRequest is the first section of an upload-pack request: everything
// up to the first flush.
type wantRequest struct {
	wants    []plumbing.Hash
	shallows []plumbing.Hash // the client's current shallow boundary

	depth          int   // deepen N; 0 when absent
	deepenSince    int64 // deepen-since; valid when hasSince
	hasSince       bool
	deepenNot      []string
	deepenRelative bool

	// Capabilities the client asked for.
	multiAck         int // 0, 1 (multi_ack), 2 (multi_ack_detailed)
	sideband         int // 0, 1 (side-band), 2 (side-band-64k)
	ofsDelta         bool
	thinPack         bool
	noProgress       bool
	includeTag       bool
	noDone           bool
	filter           string
	filterRequested  bool
	capabilitiesSeen bool
}

// deepening reports whether the request moves the shallow boundary (the
// server then answers with a shallow section in every response).
func (r *wantRequest) deepening() bool {
	return r.depth > 0 || r.hasSince || len(r.deepenNot) > 0
}

func (r *wantRequest) setCapabilities(caps []byte) {
	r.capabilitiesSeen = true
	for _, c := range bytes.Fields(caps) {
		switch string(c) {
		case "multi_ack":
			if r.multiAck < 1 {
				r.multiAck = 1
			}
		case "multi_ack_detailed":
			r.multiAck = 2
		case "side-band":
			if r.sideband < 1 {
				r.sideband = 1
			}
		case "side-band-64k":
			r.sideband = 2
		case "ofs-delta":
			r.ofsDelta = true
		case "thin-pack":
			r.thinPack = true
		case "no-progress":
			r.noProgress = true
		case "include-tag":
			r.includeTag = true
		case "no-done":
			r.noDone = true
		case "deepen-relative":
			r.deepenRelative = true
		}
	}
}

// readWants reads the want section. It returns (nil, nil) when the body
// is empty or holds only a flush.
func readWants(pr *pktReader) (*wantRequest, error) {
	req := &wantRequest{}
	for {
		line, err := pr.next()
		if err == io.EOF {
			if len(req.wants) == 0 && len(req.shallows) == 0 {
				return nil, nil
			}
			return nil, badRequest("upload-pack: request ended before the end of the want list")
		}
		if errors.Is(err, errFlush) {
			if len(req.wants) == 0 {
				return nil, nil
			}
			return req, nil
		}
		if errors.Is(err, errDelim) {
			return nil, badRequest("upload-pack: protocol error, unexpected delim-pkt")
		}
		if err != nil {
			return nil, err
		}
		switch {
		case bytes.HasPrefix(line, []byte("want ")):
			arg := line[5:]
			h, ok := parseHex(arg)
			if !ok || (len(arg) > 40 && arg[40] != ' ') {
				return nil, badRequest("upload-pack: protocol error, expected to get object ID, not '%s'", line)
			}
			if len(req.wants) == 0 && !req.capabilitiesSeen && len(arg) > 41 {
				req.setCapabilities(arg[41:])
			}
			req.wants = append(req.wants, h)
		case bytes.HasPrefix(line, []byte("shallow ")):
			h, ok := parseHexExact(line[8:])
			if !ok {
				return nil, badRequest("upload-pack: invalid shallow line: %s", line)
			}
			req.shallows = append(req.shallows, h)
		case bytes.HasPrefix(line, []byte("deepen ")):
			n, err := strconv.Atoi(string(line[7:]))
			if err != nil || n <= 0 {
				return nil, badRequest("upload-pack: invalid deepen: %s", line)
			}
			req.depth = n
		case bytes.HasPrefix(line, []byte("deepen-since ")):
			n, err := strconv.ParseInt(string(line[13:]), 10, 64)
			if err != nil {
				return nil, badRequest("upload-pack: invalid deepen-since: %s", line)
			}
			req.deepenSince, req.hasSince = n, true
		case bytes.HasPrefix(line, []byte("deepen-not ")):
			req.deepenNot = append(req.deepenNot, string(line[11:]))
		case bytes.HasPrefix(line, []byte("filter ")):
			req.filter, req.filterRequested = string(line[7:]), true
		default:
			return nil, badRequest("upload-pack: protocol error, unexpected '%s'", line)
		}
	}
}
