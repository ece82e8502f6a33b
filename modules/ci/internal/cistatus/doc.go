// Package cistatus owns the pure rules of CI statuses as GitLab 9.x applies
// them: the eight job statuses and the events that move a job between them,
// the composite status of a set of jobs (a stage or a whole pipeline), and
// stage gating, which decides whether a created job becomes pending, manual
// or skipped once the stages before it are complete.
//
// Everything here is a function of its arguments: no store, no clock, no
// I/O. The CI module's scheduler feeds it the statuses it has stored and
// writes back what these rules decide, so the rules can be tested exhaustively
// without a database.
//
// The package imports only the standard library; nothing in Fennec may be
// imported from here, so the pipeline parser and the scheduler can both use it.
package cistatus
