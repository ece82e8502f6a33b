// Package blob is where modules keep files that are not the store's rows
// and not git's: CI traces, artifacts archives and reports, uploads, SSH
// host keys. A Store holds whole objects under slash-separated keys, and
// asks of its backend only what an object store (S3 and alike) offers: put
// a whole object, read ranges of it, list and delete by prefix. There is
// no rename and no append in place; Append is a write at a stated offset,
// which an object store can keep as one object per chunk.
//
// Dir is the implementation on a directory (the data directory, shared
// between nodes on NFS or CephFS): a key is a path under it, so the files
// lie where Fennec kept them before the seam. The contract every
// implementation passes is core/blob/blobtest.
//
// It imports nothing of Fennec.
package blob
