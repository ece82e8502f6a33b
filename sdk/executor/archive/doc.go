// Package archive is the artifacts archive of a job, for executors and for
// the host alike: choosing the files (Select: globs with "**" and git's
// untracked files, never following a symbolic link), writing them as a zip
// under a size cap (Write), and extracting a zip into a directory without
// letting any entry land outside it (Extract: no "..", no absolute names,
// no writing through a symbolic link that leaves the directory, a cap on
// the bytes written).
//
// It imports only the standard library.
package archive
