// Package gitpack is the object database of one bare git repository,
// built for serving git at C git's speed.
//
// A Store reads the packs under objects/pack (through their version 2
// .idx files) and loose objects, resolving ofs and ref deltas with a
// bounded cache of inflated objects. WritePack writes a pack for a client
// by reusing the stored entries byte for byte (no delta search, no
// recompression), streaming whole packs when every object of a pack is
// wanted. Receive takes a pushed pack (thin or not) into a quarantine
// directory, verifies and indexes it, and completes it with the bases the
// Store has; Install makes it visible. Repack writes one closed pack (the
// closure of a set of tips, recorded in a pack-<sha>.fennec sidecar) and
// removes what it replaces without blocking readers.
//
// The files it writes follow git's formats exactly: C git and go-git read
// them.
package gitpack
