package gitserve

import (
	"bytes"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// unhexTable maps an ASCII byte to its hex value, or 0xff.
var unhexTable = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
	}
	for c := 'A'; c <= 'F'; c++ {
		t[c] = byte(c - 'A' + 10)
	}
	return t
}()

// parseHex decodes 40 hex digits at the start of b.
func parseHex(b []byte) (h plumbing.Hash, ok bool) {
	if len(b) < 40 {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, lo := unhexTable[b[2*i]], unhexTable[b[2*i+1]]
		if hi|lo == 0xff || hi > 15 || lo > 15 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

// parseHexExact decodes b, which must be exactly 40 hex digits.
func parseHexExact(b []byte) (plumbing.Hash, bool) {
	if len(b) != 40 {
		return plumbing.ZeroHash, false
	}
	return parseHex(b)
}

// parseCommit reads the tree, parent and committer header lines of a
// commit; parents are appended to buf (which is reused).
func parseCommit(data []byte, buf []plumbing.Hash) (tree plumbing.Hash, parents []plumbing.Hash, when int64, ok bool) {
	parents = buf[:0]
	if !bytes.HasPrefix(data, []byte("tree ")) {
		return tree, parents, 0, false
	}
	tree, ok = parseHex(data[5:])
	if !ok || len(data) < 46 || data[45] != '\n' {
		return tree, parents, 0, false
	}
	data = data[46:]
	for len(data) >= 48 && string(data[:7]) == "parent " {
		p, ok := parseHex(data[7:])
		if !ok || data[47] != '\n' {
			return tree, parents, 0, false
		}
		parents = append(parents, p)
		data = data[48:]
	}
	// The committer line follows author (and maybe other headers); stop at
	// the blank line that ends the header.
	for len(data) > 0 && data[0] != '\n' {
		nl := bytes.IndexByte(data, '\n')
		line := data
		if nl >= 0 {
			line = data[:nl]
			data = data[nl+1:]
		} else {
			data = nil
		}
		if bytes.HasPrefix(line, []byte("committer ")) {
			when = parseIdentTime(line)
			break
		}
	}
	return tree, parents, when, true
}

// parseIdentTime parses "<name> <<email>> <time> <tz>" after the last '>'.
func parseIdentTime(line []byte) int64 {
	i := bytes.LastIndexByte(line, '>')
	if i < 0 {
		return 0
	}
	rest := line[i+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	var n int64
	for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
		n = n*10 + int64(rest[0]-'0')
		rest = rest[1:]
	}
	return n
}

// parseTagTarget reads the object and type lines of a tag.
func parseTagTarget(data []byte) (target plumbing.Hash, t gitpack.Type, ok bool) {
	if !bytes.HasPrefix(data, []byte("object ")) {
		return target, 0, false
	}
	target, ok = parseHex(data[7:])
	if !ok || len(data) < 48 || data[47] != '\n' {
		return target, 0, false
	}
	rest := data[48:]
	if !bytes.HasPrefix(rest, []byte("type ")) {
		return target, 0, false
	}
	rest = rest[5:]
	if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	switch string(rest) {
	case "commit":
		t = gitpack.Commit
	case "tree":
		t = gitpack.Tree
	case "blob":
		t = gitpack.Blob
	case "tag":
		t = gitpack.Tag
	default:
		return target, 0, false
	}
	return target, t, true
}

// Tree entry kinds.
const (
	entryBlob = iota
	entryTree
	entryGitlink
)

// nextTreeEntry splits the first entry off a tree: "mode SP name NUL id".
// It returns the kind, the name and id, and the rest of the tree.
func nextTreeEntry(data []byte) (kind int, name []byte, id plumbing.Hash, rest []byte, ok bool) {
	sp := bytes.IndexByte(data, ' ')
	if sp <= 0 {
		return 0, nil, id, nil, false
	}
	mode := data[:sp]
	nul := bytes.IndexByte(data[sp+1:], 0)
	if nul < 0 {
		return 0, nil, id, nil, false
	}
	end := sp + 1 + nul + 1
	if len(data) < end+20 {
		return 0, nil, id, nil, false
	}
	name = data[sp+1 : end-1]
	copy(id[:], data[end:end+20])
	rest = data[end+20:]
	switch {
	case len(mode) == 5 && mode[0] == '4': // 40000
		kind = entryTree
	case len(mode) == 6 && mode[0] == '1' && mode[1] == '6': // 160000
		kind = entryGitlink
	default:
		kind = entryBlob
	}
	return kind, name, id, rest, true
}
