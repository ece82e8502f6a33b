package gitpack

import (
	"errors"
	"fmt"
)

// git's delta format: the base's size and the result's size as base-128
// varints (least significant group first), then instructions. An
// instruction byte with the high bit set copies from the base: bits 0-3
// say which of four offset bytes follow, bits 4-6 which of three size
// bytes (size 0 means 0x10000). A byte 1-127 inserts that many literal
// bytes that follow. Byte 0 is reserved.

var errDeltaCorrupt = errors.New("gitpack: corrupt delta")

// deltaSizes returns the base and result sizes a delta declares and the
// position of its first instruction.
func deltaSizes(delta []byte) (src, dst uint64, pos int, err error) {
	src, pos, err = deltaVarint(delta, 0)
	if err != nil {
		return
	}
	dst, pos, err = deltaVarint(delta, pos)
	return
}

func deltaVarint(b []byte, pos int) (uint64, int, error) {
	var v uint64
	var shift uint
	for {
		if pos >= len(b) || shift > 63 {
			return 0, 0, errDeltaCorrupt
		}
		c := b[pos]
		pos++
		v |= uint64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			return v, pos, nil
		}
	}
}

// deltaCopy decodes a copy instruction's offset and size (op is the
// instruction byte, already read at pos-1).
func deltaCopy(d []byte, op byte, pos int) (off, size uint64, next int, ok bool) {
	for i := uint(0); i < 4; i++ {
		if op&(1<<i) != 0 {
			if pos >= len(d) {
				return 0, 0, 0, false
			}
			off |= uint64(d[pos]) << (8 * i)
			pos++
		}
	}
	for i := uint(0); i < 3; i++ {
		if op&(0x10<<i) != 0 {
			if pos >= len(d) {
				return 0, 0, 0, false
			}
			size |= uint64(d[pos]) << (8 * i)
			pos++
		}
	}
	if size == 0 {
		size = 0x10000
	}
	return off, size, pos, true
}

// applyDelta applies delta to base. It checks every instruction before
// allocating the result, so a delta that claims a huge result or copies
// out of the base fails without allocating; limit (if > 0) bounds the
// result's size.
func applyDelta(base, delta []byte, limit int64) ([]byte, error) {
	src, dst, start, err := deltaSizes(delta)
	if err != nil {
		return nil, err
	}
	if src != uint64(len(base)) {
		return nil, fmt.Errorf("gitpack: delta base size %d, base has %d bytes", src, len(base))
	}
	if limit > 0 && dst > uint64(limit) {
		return nil, fmt.Errorf("gitpack: delta result of %d bytes exceeds the limit", dst)
	}
	// Validate and measure.
	var total uint64
	for pos := start; pos < len(delta); {
		op := delta[pos]
		pos++
		switch {
		case op&0x80 != 0:
			off, size, next, ok := deltaCopy(delta, op, pos)
			if !ok || off+size > uint64(len(base)) {
				return nil, errDeltaCorrupt
			}
			pos = next
			total += size
		case op != 0:
			if pos+int(op) > len(delta) {
				return nil, errDeltaCorrupt
			}
			pos += int(op)
			total += uint64(op)
		default:
			return nil, errDeltaCorrupt
		}
		if total > dst {
			return nil, errDeltaCorrupt
		}
	}
	if total != dst {
		return nil, errDeltaCorrupt
	}
	out := make([]byte, dst)
	w := 0
	for pos := start; pos < len(delta); {
		op := delta[pos]
		pos++
		if op&0x80 != 0 {
			off, size, next, _ := deltaCopy(delta, op, pos)
			pos = next
			w += copy(out[w:], base[off:off+size])
		} else {
			w += copy(out[w:], delta[pos:pos+int(op)])
			pos += int(op)
		}
	}
	return out, nil
}
