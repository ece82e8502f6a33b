package gitpack

// The input side of Receive: a reader that refuses a pack past the push size
// limit, and the streamer that reads the pack off the wire while hashing it
// for the trailer, summing each entry's crc32 and copying it to the
// quarantine file.

import (
	"bufio"
	"crypto/sha1"
	"hash"
	"hash/crc32"
	"io"
)

// limitedReader counts what it reads and fails past a limit.
type limitedReader struct {
	r        io.Reader
	n, max   int64
	tooLarge bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.max > 0 && l.n >= l.max {
		// One byte more proves the pack too large.
		var one [1]byte
		m, err := l.r.Read(one[:])
		if m > 0 {
			l.tooLarge = true
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if l.max > 0 && int64(len(p)) > l.max-l.n {
		p = p[:l.max-l.n]
	}
	m, err := l.r.Read(p)
	l.n += int64(m)
	return m, err
}

// streamer reads a pack from the wire. Every byte consumed is hashed for
// the trailer, added to the current entry's crc32 and written to the
// quarantine file, lazily, a buffer at a time.
type streamer struct {
	r               io.Reader
	buf             []byte
	start, pos, end int   // buf[start:pos] consumed, not yet flushed
	off             int64 // stream offset of buf[pos]
	sum             hash.Hash
	crc             uint32
	w               *bufio.Writer
	eof             bool
	err             error
}

func newStreamer(r io.Reader, w io.Writer) *streamer {
	return &streamer{r: r, buf: make([]byte, 2<<20), sum: sha1.New(), w: bufio.NewWriterSize(w, 256<<10)}
}

// flush accounts for the bytes consumed so far.
func (st *streamer) flush() {
	b := st.buf[st.start:st.pos]
	if len(b) > 0 {
		st.sum.Write(b)
		st.crc = crc32.Update(st.crc, crc32.IEEETable, b)
		if _, err := st.w.Write(b); err != nil && st.err == nil {
			st.err = err
		}
	}
	st.start = st.pos
}

func (st *streamer) fill() error {
	if st.err != nil {
		return st.err
	}
	st.flush()
	st.start, st.pos, st.end = 0, 0, 0
	if st.eof {
		return io.EOF
	}
	for st.end == 0 {
		n, err := st.r.Read(st.buf)
		st.end = n
		if err == io.EOF {
			st.eof = true
			if n == 0 {
				return io.EOF
			}
		} else if err != nil {
			st.err = err
			if n == 0 {
				return err
			}
		}
	}
	return nil
}

// ensure makes at least n unread bytes available in the buffer, short of
// the end of the stream, and returns the unread bytes.
func (st *streamer) ensure(n int) []byte {
	if st.end-st.pos >= n || st.eof || st.err != nil {
		return st.buf[st.pos:st.end]
	}
	st.flush()
	m := copy(st.buf, st.buf[st.pos:st.end])
	st.start, st.pos, st.end = 0, 0, m
	n = min(n, len(st.buf))
	for st.end < n {
		k, err := st.r.Read(st.buf[st.end:])
		st.end += k
		if err == io.EOF {
			st.eof = true
			break
		}
		if err != nil {
			st.err = err
			break
		}
	}
	return st.buf[st.pos:st.end]
}

func (st *streamer) ReadByte() (byte, error) {
	if st.pos == st.end {
		if err := st.fill(); err != nil {
			return 0, err
		}
	}
	c := st.buf[st.pos]
	st.pos++
	st.off++
	return c, nil
}

func (st *streamer) Read(p []byte) (int, error) {
	if st.pos == st.end {
		if err := st.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, st.buf[st.pos:st.end])
	st.pos += n
	st.off += int64(n)
	return n, nil
}

func (st *streamer) readFull(p []byte) error {
	_, err := io.ReadFull(st, p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// atEOF reports whether the stream has nothing more.
func (st *streamer) atEOF() (bool, error) {
	if st.pos < st.end {
		return false, nil
	}
	err := st.fill()
	if err == io.EOF {
		return true, nil
	}
	return false, err
}
