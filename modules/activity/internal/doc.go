// Package internal implements the activity module: its table of feed
// entries (store.go), the subscribers that fill it, the service that reads
// the feeds (entry.Service) and its HTTP adapter (http*.go). Only
// modules/activity may import it.
package internal
