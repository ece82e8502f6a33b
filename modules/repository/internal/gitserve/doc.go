// Package gitserve speaks the server side of git's pack protocol over
// smart HTTP in stateless-RPC mode: the ref advertisement of
// git-upload-pack and git-receive-pack (GET info/refs?service=...), and
// git-upload-pack itself (POST git-upload-pack), which negotiates with
// the client (multi_ack_detailed, no-done), computes shallow boundaries
// (deepen, deepen-since, deepen-not, deepen-relative, unshallow), walks
// the object graph and streams the pack, multiplexed on side-band-64k.
// Protocol v0/v1 is served by AdvertiseUploadPack and UploadPack; a
// client that sends "Git-Protocol: version=2" (IsProtocolV2) may be
// served v2 (ls-refs and fetch) by AdvertiseUploadPackV2 and UploadPackV2.
// Partial clone (filter) is not offered: git falls back to a full clone.
// For git-receive-pack it does the framing only (ReadPushRequest,
// WritePushReport); what a push may do is the caller's policy.
//
// The same protocol on one two-way stream (git over SSH) is
// ServeUploadPack, a whole upload-pack session (v0/v1 negotiation rounds
// on the stream, or v2 commands until the client ends), and
// AdvertiseReceivePackSession before ReadPushRequest and WritePushReport
// on the same stream (session.go).
//
// The object walk parses commits and trees itself from the bytes of
// gitpack.Store.Read, keeps its marks in one open-addressed table keyed
// by object id, skips the tree entries that are unchanged from the
// previous version of the same directory without looking them up, and
// uses the store's closed packs (packs holding exactly the closure of
// their tips): a walk with no haves and no shallow boundary that reaches
// every tip of a closed pack walks no commit or tree inside it and has
// gitpack send the pack whole.
//
// The HTTP layer (content types, auth, gzip, caching headers) is the
// caller's; these functions get a decoded request body and a writer for
// the response body (flushed now and then for progress when it is an
// http.Flusher).
package gitserve
