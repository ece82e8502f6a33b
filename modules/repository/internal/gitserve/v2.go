package gitserve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// IsProtocolV2 reports whether a Git-Protocol request header (a
// colon-separated list of key=value) asks for protocol version 2. The
// HTTP layer then answers GET info/refs?service=git-upload-pack with
// AdvertiseUploadPackV2 and POST git-upload-pack with UploadPackV2;
// otherwise (and always for git-receive-pack) with the v0 functions.
func IsProtocolV2(gitProtocol string) bool {
	for _, kv := range strings.Split(gitProtocol, ":") {
		if strings.TrimSpace(kv) == "version=2" {
			return true
		}
	}
	return false
}

// v2Caps is the capability advertisement of protocol v2. No "filter"
// (partial clone is not implemented) and no "unborn" (Repo does not say
// where an unborn HEAD points).
var v2Caps = []string{
	"version 2",
	"agent=" + Agent,
	"ls-refs",
	"fetch=shallow wait-for-done",
	"server-option",
	"object-format=sha1",
}

// AdvertiseUploadPackV2 writes the whole body of GET
// info/refs?service=git-upload-pack for a client that asked for protocol
// v2: the capability advertisement (without the "# service=" header, as
// git http-backend does for v2).
func AdvertiseUploadPackV2(w io.Writer, repo Repo) error {
	p := newPktWriter(w)
	for _, c := range v2Caps {
		p.line(c + "\n")
	}
	p.flushPkt()
	return p.flush()
}

// UploadPackV2 answers one POST git-upload-pack request of protocol v2:
// command=ls-refs, or command=fetch (a negotiation round answered with an
// acknowledgments section, or the pack after "done" or once ready). Request
// errors are reported to the client with an "ERR" pkt-line and returned
// wrapping ErrBadRequest, as with UploadPack.
func UploadPackV2(ctx context.Context, w io.Writer, r io.Reader, repo Repo) error {
	if repo.Objects == nil {
		return errors.New("gitserve: no object store")
	}
	s := &uploadState{ctx: ctx, repo: repo, src: repo.Objects, pack: repo.Objects,
		pr: newPktReader(r), pw: newPktWriter(w), v2: true}
	err := s.runV2()
	if err != nil && !s.pw.sentPack {
		s.pw.line("ERR " + clientMessage(err) + "\n")
	}
	if ferr := s.pw.flush(); err == nil && ferr != nil {
		err = ferr
	}
	return err
}

// readV2Request reads a command request: the command, its capability
// lines, a delim-pkt, and the arguments up to a flush.
func (s *uploadState) readV2Request() (command string, args []string, err error) {
	sawDelim, haves := false, 0
	for {
		line, err := s.pr.next()
		switch {
		case err == io.EOF:
			if command == "" {
				return "", nil, nil
			}
			return "", nil, badRequest("upload-pack: protocol error, request ended early")
		case errors.Is(err, errFlush):
			return command, args, nil
		case errors.Is(err, errDelim):
			if sawDelim {
				return "", nil, badRequest("upload-pack: protocol error, unexpected delim-pkt")
			}
			sawDelim = true
			continue
		case err != nil:
			return "", nil, err
		}
		if sawDelim {
			if bytes.HasPrefix(line, []byte("have ")) {
				if haves++; haves > maxHaves {
					return "", nil, errTooManyHaves
				}
			}
			args = append(args, string(line))
			continue
		}
		if c, ok := bytes.CutPrefix(line, []byte("command=")); ok {
			if command != "" {
				return "", nil, badRequest("upload-pack: protocol error, two commands")
			}
			command = string(c)
			continue
		}
		if command == "" {
			return "", nil, badRequest("upload-pack: protocol error, expected a command, got '%s'", line)
		}
		// Capabilities: agent=, object-format=, server-option=.
		if f, ok := bytes.CutPrefix(line, []byte("object-format=")); ok && string(f) != "sha1" {
			return "", nil, badRequest("upload-pack: unsupported object format '%s'", f)
		}
	}
}

func (s *uploadState) runV2() error {
	command, args, err := s.readV2Request()
	if err != nil || command == "" {
		return err
	}
	return s.runV2Command(command, args)
}

// runV2Command answers one command request.
func (s *uploadState) runV2Command(command string, args []string) error {
	switch command {
	case "ls-refs":
		return s.lsRefs(args)
	case "fetch":
		return s.fetchV2(args)
	default:
		return badRequest("upload-pack: unknown command '%s'", command)
	}
}

// lsRefs answers command=ls-refs: HEAD and the refs under the requested
// prefixes, with symref targets and peeled tags when asked.
func (s *uploadState) lsRefs(args []string) error {
	var peel, symrefs bool
	var prefixes []string
	for _, a := range args {
		switch {
		case a == "peel":
			peel = true
		case a == "symrefs":
			symrefs = true
		case a == "unborn":
			// Not advertised; an unborn HEAD is simply not listed.
		case strings.HasPrefix(a, "ref-prefix "):
			prefixes = append(prefixes, strings.TrimPrefix(a, "ref-prefix "))
		default:
			return badRequest("upload-pack: unexpected line: '%s'", a)
		}
	}
	match := func(name string) bool {
		if len(prefixes) == 0 {
			return true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	refs, head, err := sortedRefs(s.src, s.repo, peel)
	if err != nil {
		return err
	}
	if !head.IsZero() && match("HEAD") {
		line := head.String() + " HEAD"
		if symrefs {
			line += " symref-target:" + string(s.repo.Head)
		}
		s.pw.line(line + "\n")
	}
	for _, r := range refs {
		if !match(r.name) {
			continue
		}
		line := r.hash.String() + " " + r.name
		if peel && !r.peeled.IsZero() {
			line += " peeled:" + r.peeled.String()
		}
		s.pw.line(line + "\n")
	}
	s.pw.flushPkt()
	return nil
}

// fetchV2 answers command=fetch.
func (s *uploadState) fetchV2(args []string) error {
	req := &wantRequest{sideband: 2, multiAck: 2}
	var haves []plumbing.Hash
	done, waitForDone := false, false
	for _, a := range args {
		line := []byte(a)
		switch {
		case bytes.HasPrefix(line, []byte("want ")):
			h, ok := parseHexExact(line[5:])
			if !ok {
				return badRequest("upload-pack: protocol error, expected to get object ID, not '%s'", a)
			}
			req.wants = append(req.wants, h)
		case bytes.HasPrefix(line, []byte("have ")):
			h, ok := parseHexExact(line[5:])
			if !ok {
				return badRequest("upload-pack: protocol error, expected to get object ID, not '%s'", a)
			}
			haves = append(haves, h)
		case bytes.HasPrefix(line, []byte("shallow ")):
			h, ok := parseHexExact(line[8:])
			if !ok {
				return badRequest("upload-pack: invalid shallow line: %s", a)
			}
			req.shallows = append(req.shallows, h)
		case bytes.HasPrefix(line, []byte("deepen ")):
			n, err := strconv.Atoi(a[7:])
			if err != nil || n <= 0 {
				return badRequest("upload-pack: invalid deepen: %s", a)
			}
			req.depth = n
		case bytes.HasPrefix(line, []byte("deepen-since ")):
			n, err := strconv.ParseInt(a[13:], 10, 64)
			if err != nil {
				return badRequest("upload-pack: invalid deepen-since: %s", a)
			}
			req.deepenSince, req.hasSince = n, true
		case bytes.HasPrefix(line, []byte("deepen-not ")):
			req.deepenNot = append(req.deepenNot, a[11:])
		case a == "deepen-relative":
			req.deepenRelative = true
		case a == "thin-pack":
			req.thinPack = true
		case a == "ofs-delta":
			req.ofsDelta = true
		case a == "no-progress":
			req.noProgress = true
		case a == "include-tag":
			req.includeTag = true
		case a == "done":
			done = true
		case a == "wait-for-done":
			waitForDone = true
		case bytes.HasPrefix(line, []byte("filter ")):
			return badRequest("upload-pack: filtering capability not negotiated")
		default:
			return badRequest("upload-pack: unexpected line: '%s'", a)
		}
	}
	if len(req.wants) == 0 {
		return badRequest("upload-pack: no wants")
	}
	s.req = req
	s.w = newWalker(s.src, 1<<12)
	s.w.ctx = s.ctx
	s.w.closed = s.repo.Objects.ClosedPacks()
	if err := s.checkWants(); err != nil {
		return err
	}
	wc, err := s.w.peelCommits(req.wants)
	if err != nil {
		return err
	}
	s.wantCommits = wc
	s.satisfied = make([]bool, len(wc))
	var acks []plumbing.Hash
	for _, h := range haves {
		if s.src.Has(h) {
			if err := s.addCommon(h); err != nil {
				return err
			}
			acks = append(acks, h)
		}
	}
	if !done {
		s.pw.line("acknowledgments\n")
		if len(acks) == 0 {
			s.pw.line("NAK\n")
		}
		for _, h := range acks {
			s.pw.line("ACK " + h.String() + "\n")
		}
		if waitForDone || !s.isReady() {
			s.pw.flushPkt()
			return nil
		}
		s.pw.line("ready\n")
		s.pw.delimPkt()
	}
	s.plan, err = s.w.planShallow(req, s.refs)
	if err != nil {
		return err
	}
	if req.deepening() || len(req.shallows) > 0 {
		s.pw.line("shallow-info\n")
		for _, h := range s.plan.shallow {
			s.pw.line("shallow " + h.String() + "\n")
		}
		for _, h := range s.plan.unshallow {
			s.pw.line("unshallow " + h.String() + "\n")
		}
		s.pw.delimPkt()
	}
	return s.sendPack()
}
