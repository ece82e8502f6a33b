// Package blobtest states the contract of a blob.Store as tests: Run them
// on every implementation (the directory one runs in this package's own
// test; an object store's would run the same).
//
// It imports core/blob only.
package blobtest
