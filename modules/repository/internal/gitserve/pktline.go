package gitserve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Pkt-line limits (gitprotocol-common): a line is at most 65520 bytes
// including its 4-byte length prefix.
const (
	maxPktLen     = 65520
	maxPktPayload = maxPktLen - 4
)

var (
	errFlush = errors.New("flush-pkt")
	errDelim = errors.New("delim-pkt")
)

// pktWriter writes pkt-lines to a buffered writer.
type pktWriter struct {
	w   *bufio.Writer
	err error
	// sentPack is set once the pack (or a side-band error) has started:
	// no ERR line may follow.
	sentPack bool
	flusher  interface{ Flush() }
}

func newPktWriter(w io.Writer) *pktWriter {
	p := &pktWriter{}
	if f, ok := w.(interface{ Flush() }); ok {
		p.flusher = f // an http.ResponseWriter
	}
	if bw, ok := w.(*bufio.Writer); ok {
		p.w = bw
	} else {
		p.w = bufio.NewWriterSize(w, 64<<10)
	}
	return p
}

// push sends what is buffered on to the client now: through the buffer,
// and through the underlying writer if it can flush (http.Flusher).
func (p *pktWriter) push() {
	if p.flush() == nil && p.flusher != nil {
		p.flusher.Flush()
	}
}

const hexDigits = "0123456789abcdef"

func (p *pktWriter) header(n int) {
	if p.err != nil {
		return
	}
	var b [4]byte
	b[0] = hexDigits[n>>12&15]
	b[1] = hexDigits[n>>8&15]
	b[2] = hexDigits[n>>4&15]
	b[3] = hexDigits[n&15]
	_, p.err = p.w.Write(b[:])
}

// data writes one pkt-line holding payload (which must fit).
func (p *pktWriter) data(payload []byte) {
	if p.err != nil {
		return
	}
	if len(payload) > maxPktPayload {
		p.err = fmt.Errorf("gitserve: pkt-line payload of %d bytes", len(payload))
		return
	}
	p.header(len(payload) + 4)
	if p.err == nil {
		_, p.err = p.w.Write(payload)
	}
}

// line writes a pkt-line of s (the caller includes any newline).
func (p *pktWriter) line(s string) {
	if p.err != nil {
		return
	}
	if len(s) > maxPktPayload {
		p.err = fmt.Errorf("gitserve: pkt-line payload of %d bytes", len(s))
		return
	}
	p.header(len(s) + 4)
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

func (p *pktWriter) linef(format string, args ...any) {
	p.line(fmt.Sprintf(format, args...))
}

func (p *pktWriter) flushPkt() {
	if p.err != nil {
		return
	}
	_, p.err = p.w.WriteString("0000")
}

func (p *pktWriter) delimPkt() {
	if p.err != nil {
		return
	}
	_, p.err = p.w.WriteString("0001")
}

// flush pushes buffered bytes to the underlying writer.
func (p *pktWriter) flush() error {
	if p.err == nil {
		p.err = p.w.Flush()
	}
	return p.err
}

// pktReader reads pkt-lines.
type pktReader struct {
	r   *bufio.Reader
	buf []byte
}

func newPktReader(r io.Reader) *pktReader {
	return &pktReader{r: bufio.NewReaderSize(r, 64<<10), buf: make([]byte, maxPktPayload)}
}

func unhex4(b []byte) (int, bool) {
	n := 0
	for _, c := range b[:4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int(v)
	}
	return n, true
}

// next returns the next line's payload with one trailing newline removed;
// errFlush for a flush-pkt, errDelim for a delim-pkt (0001) of protocol
// v2, io.EOF at a clean end of input. The slice is valid until the next
// call.
func (p *pktReader) next() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(p.r, h[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, badRequest("truncated pkt-line")
	}
	n, ok := unhex4(h[:])
	if !ok {
		return nil, badRequest("bad pkt-line length %q", h[:])
	}
	switch {
	case n == 0:
		return nil, errFlush
	case n == 1:
		return nil, errDelim
	case n < 4:
		return nil, badRequest("unexpected special packet %04x", n)
	case n > maxPktLen:
		return nil, badRequest("pkt-line of %d bytes", n)
	}
	b := p.buf[:n-4]
	if _, err := io.ReadFull(p.r, b); err != nil {
		return nil, badRequest("truncated pkt-line")
	}
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	return b, nil
}

// Side-band channels.
const (
	bandData     = 1
	bandProgress = 2
	bandError    = 3
)

// sideband multiplexes a pack and messages onto pkt-lines. With mode 0
// the pack is written raw and messages are dropped.
type sideband struct {
	p   *pktWriter
	max int // data bytes per packet: 65515 for side-band-64k, 999 for side-band; 0 for none
	buf []byte
}

func newSideband(p *pktWriter, mode int) *sideband {
	s := &sideband{p: p}
	switch mode {
	case 2:
		s.max = maxPktPayload - 1
	case 1:
		s.max = 1000 - 4 - 1
	}
	if s.max > 0 {
		s.buf = make([]byte, s.max+1)
	}
	return s
}

// Write sends pack data on band 1.
func (s *sideband) Write(b []byte) (int, error) {
	if s.p.err != nil {
		return 0, s.p.err
	}
	if s.max == 0 {
		n, err := s.p.w.Write(b)
		if err != nil {
			s.p.err = err
		}
		return n, err
	}
	n := 0
	for len(b) > 0 {
		c := min(len(b), s.max)
		s.buf[0] = bandData
		copy(s.buf[1:], b[:c])
		s.p.data(s.buf[:1+c])
		if s.p.err != nil {
			return n, s.p.err
		}
		n += c
		b = b[c:]
	}
	return n, nil
}

// keepAlive sends an empty data packet.
func (s *sideband) keepAlive() {
	if s.max > 0 {
		s.p.data([]byte{bandData})
	}
}

// message sends text on band 2 (progress) or 3 (fatal error).
func (s *sideband) message(band byte, text string) {
	if s.max == 0 {
		return
	}
	for len(text) > 0 {
		c := min(len(text), s.max)
		s.buf[0] = band
		copy(s.buf[1:], text[:c])
		s.p.data(s.buf[:1+c])
		text = text[c:]
	}
}
