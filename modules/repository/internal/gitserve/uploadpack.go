package gitserve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// UploadPack answers one POST git-upload-pack request body in
// stateless-RPC mode (protocol v0/v1): the want section, then either one
// round of negotiation ("have" lines ended by a flush, answered with
// ACK/NAK lines) or the final request ended by "done" (answered with the
// pack, on side-band when negotiated). With multi_ack_detailed and no-done
// the pack follows at once when the server is ready.
//
// A request error (a malformed request, a want of an object that was not
// advertised) is reported to the client with an "ERR" pkt-line and
// returned wrapping ErrBadRequest.
func UploadPack(ctx context.Context, w io.Writer, r io.Reader, repo Repo) error {
	if repo.Objects == nil {
		return errors.New("gitserve: no object store")
	}
	return uploadPack(ctx, w, r, repo, repo.Objects, repo.Objects.ClosedPacks())
}

// uploadState is one request being answered.
type uploadState struct {
	ctx  context.Context
	repo Repo
	src  objectSource
	pack packWriter
	pr   *pktReader
	pw   *pktWriter
	req  *wantRequest
	refs []advRef
	w    *walker
	plan *shallowPlan

	// Negotiation.
	wantCommits []int32
	satisfied   []bool
	commons     []plumbing.Hash
	lastCommon  plumbing.Hash
	oldest      int64
	dirty       bool
	ready       bool
	sentReady   bool

	v2 bool // protocol v2: the pack follows a "packfile" line
	// stateful: a session on a two-way stream (ServeUploadPack), where
	// negotiation rounds follow each other in one run and each answer is
	// pushed to the client at once.
	stateful bool
}

// testHookWalk, when set (by tests), sees every walk done for a pack.
var testHookWalk func(*walker)

// packWriter is what UploadPack needs to write a pack.
type packWriter interface {
	WritePack(w io.Writer, objects []plumbing.Hash, opt gitpack.WriteOptions) error
}

func uploadPack(ctx context.Context, w io.Writer, r io.Reader, repo Repo, src interface {
	objectSource
	packWriter
}, closed []gitpack.ClosedPack) error {
	s := &uploadState{ctx: ctx, repo: repo, src: src, pack: src, pr: newPktReader(r), pw: newPktWriter(w)}
	err := s.run(closed)
	if err != nil && !s.pw.sentPack {
		s.pw.line("ERR " + clientMessage(err) + "\n")
	}
	if ferr := s.pw.flush(); err == nil && ferr != nil {
		err = ferr
	}
	return err
}

func (s *uploadState) run(closed []gitpack.ClosedPack) error {
	req, err := readWants(s.pr)
	if err != nil || req == nil {
		return err
	}
	s.req = req
	if req.filterRequested {
		return badRequest("upload-pack: filtering capability not negotiated")
	}
	s.w = newWalker(s.src, 1<<12)
	s.w.ctx = s.ctx
	s.w.closed = closed
	if err := s.checkWants(); err != nil {
		return err
	}

	// The shallow section, in every response of a deepening request.
	s.plan, err = s.w.planShallow(req, s.refs)
	if err != nil {
		return err
	}
	if req.deepening() {
		for _, h := range s.plan.shallow {
			s.pw.line("shallow " + h.String() + "\n")
		}
		for _, h := range s.plan.unshallow {
			s.pw.line("unshallow " + h.String() + "\n")
		}
		s.pw.flushPkt()
		if s.stateful {
			s.pw.push() // the client reads the shallow section before sending haves
		}
	}

	// Negotiation.
	wc, err := s.w.peelCommits(req.wants)
	if err != nil {
		return err
	}
	s.wantCommits = wc
	s.satisfied = make([]bool, len(wc))
	gotCommon, gotOther, haves := false, false, 0
	for {
		line, err := s.pr.next()
		if err == io.EOF {
			// The first request of a deepening fetch ends after the want
			// section: it gets only the shallow section.
			return nil
		}
		if errors.Is(err, errFlush) {
			if req.multiAck == 2 && gotCommon && !gotOther && s.isReady() && !s.sentReady {
				s.sentReady = true
				s.pw.line("ACK " + s.lastCommon.String() + " ready\n")
			}
			if len(s.commons) == 0 || req.multiAck > 0 {
				s.pw.line("NAK\n")
			}
			if req.noDone && s.sentReady {
				s.pw.line("ACK " + s.lastCommon.String() + "\n")
				return s.sendPack()
			}
			if !s.stateful {
				return nil
			}
			// The next round follows on the same stream.
			gotCommon, gotOther = false, false
			s.pw.push()
			continue
		}
		if errors.Is(err, errDelim) {
			return badRequest("upload-pack: protocol error, unexpected delim-pkt")
		}
		if err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(line, []byte("have ")):
			if haves++; haves > maxHaves {
				return errTooManyHaves
			}
			h, ok := parseHexExact(line[5:])
			if !ok {
				return badRequest("upload-pack: protocol error, expected to get object ID, not '%s'", line)
			}
			if s.src.Has(h) {
				gotCommon = true
				if err := s.addCommon(h); err != nil {
					return err
				}
				switch req.multiAck {
				case 2:
					s.pw.line("ACK " + h.String() + " common\n")
				case 1:
					s.pw.line("ACK " + h.String() + " continue\n")
				default:
					if len(s.commons) == 1 {
						s.pw.line("ACK " + h.String() + "\n")
					}
				}
				continue
			}
			gotOther = true
			if req.multiAck > 0 && s.isReady() {
				if req.multiAck == 2 {
					s.sentReady = true
					s.pw.line("ACK " + h.String() + " ready\n")
				} else {
					s.pw.line("ACK " + h.String() + " continue\n")
				}
			}
		case string(line) == "done":
			if len(s.commons) > 0 {
				if req.multiAck > 0 {
					s.pw.line("ACK " + s.lastCommon.String() + "\n")
				}
			} else {
				s.pw.line("NAK\n")
			}
			return s.sendPack()
		default:
			return badRequest("upload-pack: expected SHA1 list, got '%s'", line)
		}
	}
}

// maxHaves bounds the "have" lines of one request. git's HTTP negotiation
// sends a few thousand at most (it gives up after 256 rounds without a
// common commit), while each have costs the server a lookup and an answer
// line: without a bound, a 1 MB gzipped request of 20 million haves held a
// core for most of a minute.
const maxHaves = 100_000

var errTooManyHaves = badRequest("upload-pack: too many haves in one request (at most %d)", maxHaves)

// checkWants loads the refs and checks that every want was advertised
// (or, as allow-reachable-sha1-in-want says, is reachable from a ref).
func (s *uploadState) checkWants() error {
	refs, head, err := sortedRefs(s.src, s.repo, true)
	if err != nil {
		return err
	}
	s.refs = refs
	tips := make(map[plumbing.Hash]bool, 2*len(refs)+1)
	if !head.IsZero() {
		tips[head] = true
	}
	for _, r := range refs {
		tips[r.hash] = true
		if !r.peeled.IsZero() {
			tips[r.peeled] = true
		}
	}
	var other []plumbing.Hash
	for _, h := range s.req.wants {
		if !tips[h] {
			if !s.src.Has(h) {
				return badRequest("upload-pack: not our ref %s", h)
			}
			other = append(other, h)
		}
	}
	if len(other) == 0 {
		return nil
	}
	// Reachable commits first (a walk of commits only), then anything
	// else with a whole object walk.
	var tipList []plumbing.Hash
	for h := range tips {
		tipList = append(tipList, h)
	}
	tipCommits, err := s.w.peelCommits(tipList)
	if err != nil {
		return err
	}
	reach, err := s.w.reachableCommits(tipCommits)
	if err != nil {
		return err
	}
	var rest []plumbing.Hash
	for _, h := range other {
		idx := s.w.t.find(h)
		if idx >= 0 && reach[idx] {
			continue
		}
		rest = append(rest, h)
	}
	if len(rest) == 0 {
		return nil
	}
	all, err := enumerate(s.src, tipList)
	if err != nil {
		return err
	}
	set := make(map[plumbing.Hash]bool, len(all))
	for _, h := range all {
		set[h] = true
	}
	for _, h := range rest {
		if !set[h] {
			return badRequest("upload-pack: not our ref %s", h)
		}
	}
	return nil
}

// addCommon records a have the server has.
func (s *uploadState) addCommon(h plumbing.Hash) error {
	s.commons = append(s.commons, h)
	s.lastCommon = h
	idx, _ := s.w.t.add(h)
	target, t, err := s.w.peel(idx, nil)
	if err != nil {
		if errors.Is(err, errMissing) {
			return nil
		}
		return err
	}
	if t != gitpack.Commit {
		return nil
	}
	if s.w.t.ents[target].flags&fTheyHave == 0 {
		s.w.t.ents[target].flags |= fTheyHave
		when := s.w.commits[s.w.t.ents[target].commit].when
		if len(s.commons) == 1 || when < s.oldest {
			s.oldest = when
		}
		s.dirty = true
	}
	return nil
}

// isReady reports whether every wanted commit reaches a common have, so
// that the server can make a good pack (git's "ok to give up").
func (s *uploadState) isReady() bool {
	if s.ready {
		return true
	}
	if !s.dirty {
		return false
	}
	s.dirty = false
	for i, want := range s.wantCommits {
		if s.satisfied[i] {
			continue
		}
		ok, err := s.reachesCommon(want)
		if err != nil || !ok {
			return false
		}
		s.satisfied[i] = true
	}
	s.ready = true
	return true
}

// reachesCommon walks down from idx, not below the oldest common have,
// looking for a common have.
func (s *uploadState) reachesCommon(idx int32) (bool, error) {
	w := s.w
	seen := map[int32]bool{idx: true}
	stack := []int32{idx}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.t.ents[i].flags&fTheyHave != 0 {
			// Remember the way: everything that led here reaches too.
			return true, nil
		}
		ci, err := w.loadCommit(i)
		if err != nil {
			if errors.Is(err, errMissing) {
				continue
			}
			return false, err
		}
		if w.commits[ci].when < s.oldest {
			continue
		}
		n := &w.commits[ci]
		for _, p := range w.parents[n.parents : n.parents+n.nparents] {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false, nil
}

// sendPack walks the objects and writes the pack.
func (s *uploadState) sendPack() error {
	req := s.req
	if s.v2 {
		s.pw.line("packfile\n")
	}
	sb := newSideband(s.pw, req.sideband)
	progress := req.sideband > 0 && !req.noProgress
	if req.sideband > 0 {
		// Now and then during the walk: progress, or without it an empty
		// data packet every few seconds as a keep-alive; both pushed to
		// the client at once.
		last := time.Now()
		s.w.progress = func(n int) {
			now := time.Now()
			switch {
			case progress && now.Sub(last) >= 500*time.Millisecond:
				sb.message(bandProgress, fmt.Sprintf("Enumerating objects: %d\r", n))
			case !progress && now.Sub(last) >= 5*time.Second:
				sb.keepAlive()
			default:
				return
			}
			last = now
			s.pw.push()
		}
	}
	wants := append(append([]plumbing.Hash(nil), req.wants...), s.plan.extraWants...)
	haves := append(append([]plumbing.Hash(nil), s.commons...), s.plan.unshallow...)
	objects, err := s.w.walk(walkRequest{
		wants:      wants,
		haves:      haves,
		shallow:    s.plan.grafts,
		aggressive: len(s.plan.grafts) > 0,
	})
	if err != nil {
		return s.fail(sb, err)
	}
	if testHookWalk != nil {
		testHookWalk(s.w)
	}
	if req.includeTag {
		objects, err = s.includeTags(objects)
		if err != nil {
			return s.fail(sb, err)
		}
	}
	if progress {
		n := len(objects)
		for _, p := range s.w.taken {
			n += p.Objects
		}
		sb.message(bandProgress, fmt.Sprintf("Enumerating objects: %d, done.\n", n))
	}
	if err := s.pw.flush(); err != nil {
		return err
	}
	s.pw.sentPack = true
	opt := gitpack.WriteOptions{OfsDelta: req.ofsDelta, Whole: s.w.taken}
	if req.thinPack {
		opt.Thin = true
		opt.ClientHas = s.w.clientHas
	}
	if progress {
		last := -1
		opt.Progress = func(written, total int) {
			pct := 100
			if total > 0 {
				pct = written * 100 / total
			}
			if pct != last {
				last = pct
				sb.message(bandProgress, fmt.Sprintf("Writing objects: %3d%% (%d/%d)\r", pct, written, total))
			}
		}
	}
	if err := s.pack.WritePack(sb, objects, opt); err != nil {
		if s.pw.err != nil {
			return s.pw.err // the client went away
		}
		return s.fail(sb, err)
	}

	if req.sideband > 0 {
		s.pw.flushPkt()
	}
	return s.pw.flush()
}

// fail reports an error while making the pack to the client: on band 3
// when side-band was negotiated, else as an ERR line (before the pack
// only).
func (s *uploadState) fail(sb *sideband, err error) error {
	if s.req.sideband > 0 {
		sb.message(bandError, clientMessage(err)+"\n")
		s.pw.flushPkt()
		s.pw.sentPack = true
	} else if !s.pw.sentPack {
		s.pw.line("ERR " + clientMessage(err) + "\n")
		s.pw.sentPack = true
	}
	return err
}

// clientMessage is what the client is told of an error: the text of a
// request error, nothing of the server's internals otherwise.
func clientMessage(err error) string {
	var re *RequestError
	switch {
	case errors.As(err, &re):
		return re.Msg
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "upload-pack: request canceled"
	default:
		return "upload-pack: internal server error"
	}
}

// includeTags adds the annotated tags that point at objects sent.
func (s *uploadState) includeTags(objects []plumbing.Hash) ([]plumbing.Hash, error) {
	w := s.w
	for _, r := range s.refs {
		if r.peeled.IsZero() {
			continue
		}
		idx, _ := w.t.add(r.hash)
		if w.t.ents[idx].flags&(fWanted|fUninteresting) != 0 {
			continue
		}
		var chain []int32
		target, _, err := w.peel(idx, func(tag int32) { chain = append(chain, tag) })
		if err != nil {
			if errors.Is(err, errMissing) {
				continue
			}
			return nil, err
		}
		f := w.t.ents[target].flags
		if f&fUninteresting != 0 || (f&fWanted == 0 && !w.inTaken(w.t.ents[target].id)) {
			continue
		}
		for _, t := range chain {
			if w.t.ents[t].flags&(fWanted|fUninteresting) == 0 {
				w.t.ents[t].flags |= fWanted
				objects = append(objects, w.t.ents[t].id)
			}
		}
	}
	return objects, nil
}
