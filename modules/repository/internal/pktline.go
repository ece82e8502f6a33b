package internal

// The few pkt-line pieces receive-pack needs: reading the command list
// exactly (the pack follows it in the same body, so nothing may be read
// ahead), and writing report lines, optionally inside side-band packets.

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxPktPayload is the largest pkt-line payload (65520 minus the header).
const maxPktPayload = 65516

var errBadPkt = errors.New("invalid pkt-line")

// readPkt reads one pkt-line: its payload, or nil for a flush packet.
// buf is reused for the payload.
func readPkt(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errBadPkt
		}
		return nil, err
	}
	n, err := strconv.ParseUint(string(hdr[:]), 16, 16)
	if err != nil {
		return nil, errBadPkt
	}
	switch {
	case n == 0:
		return nil, nil
	case n < 4 || n > maxPktPayload+4:
		return nil, errBadPkt
	}
	n -= 4
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, errBadPkt
	}
	if buf == nil {
		buf = []byte{}
	}
	return buf, nil
}

// pktWriter writes pkt-lines, inside side-band channel 1 when sideband is
// set (as report-status must be when the client asked for side-band-64k).
type pktWriter struct {
	w        io.Writer
	sideband bool
	err      error
}

func (p *pktWriter) raw(b []byte) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

// line writes one pkt-line with s as payload.
func (p *pktWriter) line(s string) {
	pkt := fmt.Sprintf("%04x%s", len(s)+4, s)
	if p.sideband {
		p.band(1, []byte(pkt))
		return
	}
	p.raw([]byte(pkt))
}

// flush writes a flush packet (inside channel 1 when side-banded).
func (p *pktWriter) flush() {
	if p.sideband {
		p.band(1, []byte("0000"))
		return
	}
	p.raw([]byte("0000"))
}

// band writes data on a side-band channel (1 data, 2 progress, 3 error).
func (p *pktWriter) band(ch byte, data []byte) {
	for len(data) > 0 {
		n := min(len(data), maxPktPayload-1)
		p.raw([]byte(fmt.Sprintf("%04x%c", n+5, ch)))
		p.raw(data[:n])
		data = data[n:]
	}
}

// message shows text to the pushing user as "remote: ..." lines; without
// side-band there is no channel for it and it is dropped.
func (p *pktWriter) message(text string) {
	if p.sideband {
		p.band(2, []byte(text+"\n"))
	}
}

// end closes a side-banded response with the outer flush packet.
func (p *pktWriter) end() {
	if p.sideband {
		p.raw([]byte("0000"))
	}
}
