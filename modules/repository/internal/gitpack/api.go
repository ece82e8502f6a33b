package gitpack

// The exported types of the package. The Store's methods live in
// store.go (reading), write.go (WritePack), receive.go (Receive, Install)
// and repack.go (Repack, ClosedPacks).

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
)

// Hash is a SHA-1 object id.
type Hash = plumbing.Hash

// Type is a pack object type, numbered as in the pack format.
type Type int8

// The pack object types.
const (
	Commit   Type = 1
	Tree     Type = 2
	Blob     Type = 3
	Tag      Type = 4
	OfsDelta Type = 6
	RefDelta Type = 7
)

// ErrNotFound is returned for an object the store does not have.
var ErrNotFound = errors.New("gitpack: object not found")

// Options tune a Store.
type Options struct {
	// CacheBytes bounds the cache of inflated objects (delta bases,
	// commits, trees); 0 means a default of 64 MiB.
	CacheBytes int64
}

// String is the type's name as git spells it ("commit", "ofs-delta").
func (t Type) String() string {
	switch t {
	case Commit:
		return "commit"
	case Tree:
		return "tree"
	case Blob:
		return "blob"
	case Tag:
		return "tag"
	case OfsDelta:
		return "ofs-delta"
	case RefDelta:
		return "ref-delta"
	}
	return "unknown"
}

// ClosedPack is a pack written by Repack: it holds exactly the objects
// reachable from Tips, so a walk that reaches every tip may take the whole
// pack without walking into it.
type ClosedPack struct {
	Name    string // pack-<sha>
	Tips    []Hash
	Objects int
	// Contains reports whether an object is in this pack.
	Contains func(Hash) bool
	// List returns the ids of all its objects, sorted (a fresh slice).
	// To send the pack whole, WriteOptions.Whole is cheaper.
	List func() []Hash

	p *pack // for WriteOptions.Whole: readable even once repacked away
}

// WriteOptions shape a pack written for a client.
type WriteOptions struct {
	// OfsDelta: the client understands offset deltas; without it deltas
	// are sent as ref deltas.
	OfsDelta bool
	// Thin: deltas whose base the client has (ClientHas) may be sent
	// without the base.
	Thin      bool
	ClientHas func(Hash) bool
	// Progress, when set, is called now and then with objects written so far.
	Progress func(written, total int)
	// Whole lists closed packs (from ClosedPacks) to send entire: all
	// their objects are written without being listed in objects (listing
	// them too does no harm), as one streamed copy where possible. A
	// ClosedPack stays usable after a Repack removed its pack.
	Whole []ClosedPack
}

// ReceiveOptions limit a received pack.
type ReceiveOptions struct {
	// MaxBytes bounds the pack's size on the wire; 0 means no limit.
	MaxBytes int64
	// MaxObjectBytes bounds the inflated size of an object that has to be
	// held in memory to resolve deltas (a delta, its base, its result);
	// whole objects that are no delta base are streamed and not bounded.
	// 0 means 1 GiB (C git does not delta objects over 512 MiB).
	MaxObjectBytes int64
}

// ErrTooLarge is returned by Receive when a pack exceeds MaxBytes.
var ErrTooLarge = errors.New("gitpack: pack exceeds the size limit")
