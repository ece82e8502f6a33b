// Package noteable is the public contract of noteables that both the notes
// root package and its internal implementation use: a Noteable as its
// owning module describes it, and the Kind a module registers. It exists
// only because the root package imports internal/ (Module()) and internal/
// needs these types too: Go forbids the cycle. The root package re-exports
// every name here (notes.Noteable, notes.Kind); other modules use those.
package noteable
