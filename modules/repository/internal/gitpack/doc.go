// Package gitpack is the object database of one bare git repository,
// built for serving git at C git's speed.
//
// A Store reads the packs under objects/pack (through their .idx files,
// version 2 or 1) and loose objects, resolving ofs and ref deltas with a
// bounded cache of inflated objects. Packs and indexes are mapped into
// memory; a pack stays mapped while anything uses it, so a reader of a
// pack that a Reload or a Repack removed keeps working. Inflating uses a
// decoder of its own for objects held whole in memory (every stored
// entry, and pushed ones up to 1 MiB), which is much cheaper than a
// streaming inflater on the small commits, trees and deltas that make up
// most of a repository.
//
// WritePack writes a pack for a client by reusing the stored entries byte
// for byte (no delta search, no recompression), streaming whole packs
// when every object of a pack is wanted (or a closed pack is named in
// WriteOptions.Whole). Receive takes a pushed pack (thin or not) into a
// quarantine directory, verifies and indexes it, computing object ids
// with SHA-1 collision detection as git does, and completes a thin pack
// with the bases the Store has; Install makes it visible. Repack writes
// one closed pack (the closure of a set of tips, recorded in a
// pack-<sha>.fennec sidecar) and removes what it replaces without
// blocking readers.
//
// The files it writes follow git's formats: C git (verify-pack, fsck)
// and go-git read them.
//
// Repack drops the objects the caller leaves out, at once: the caller
// keeps pushes from racing with it (a push that checked its connectivity
// against an object a concurrent Repack then drops would leave a hole).
package gitpack
