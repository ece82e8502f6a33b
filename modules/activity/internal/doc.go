// Package internal implements the activity module: its table of feed
// entries, the subscribers that fill it and the feed operations. Only
// modules/activity may import it.
package internal
