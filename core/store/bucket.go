package store

// bucketRef is a thin wrapper so table code reads as "b.Get" whichever
// engine is behind it.
type bucketRef struct{ Bucket }
