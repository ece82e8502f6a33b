package store

import bolt "go.etcd.io/bbolt"

// bucketRef is a thin alias so table code reads as "b.Get" without exposing
// which bbolt type is behind it.
type bucketRef struct{ *bolt.Bucket }
