// Package gitserve speaks the server side of git's pack protocol over
// smart HTTP in stateless-RPC mode: the ref advertisement of
// git-upload-pack and git-receive-pack (GET info/refs?service=...), and
// git-upload-pack itself (POST git-upload-pack), which negotiates with
// the client (multi_ack_detailed, no-done), computes shallow boundaries
// (deepen, deepen-since, deepen-not, deepen-relative), walks the object
// graph and streams the pack, multiplexed on side-band-64k.
//
// The object walk parses commits and trees itself from the bytes of
// gitpack.Store.Read, keeps its marks in one open-addressed table keyed
// by object id, and uses the store's closed packs (packs holding exactly
// the closure of their tips) to take whole packs without walking the
// trees inside them.
//
// The HTTP layer (content types, auth, gzip, caching headers) is the
// caller's; these functions get a decoded request body and a writer for
// the response body.
package gitserve
