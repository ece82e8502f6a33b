// Command gitbench measures git over smart HTTP: Fennec against C git's
// `git http-backend`, on the same deterministic reference repository
// (repotest.Reference: 20,000 commits, 5,000 files in nested directories, a
// few binaries, fully repacked with a bitmap), side by side in one run.
//
// Run it with `make bench-git` (GITBENCH_FLAGS="..." passes flags), or
//
//	go run ./modules/repository/internal/gitbench [flags]
//
// which builds ./hostapp itself when -fennec names no binary. Flags:
//
//	-runs N            warm runs per scenario, the median is reported (3)
//	-commits, -files, -binaries
//	                   the reference repository's shape (repotest.Shape;
//	                   0 means its default, -binaries -1 means none)
//	-servers git,fennec
//	                   which servers to measure
//	-scenarios clone,shallow,fetch,push
//	                   which scenarios to run
//	-fennec PATH       the fennec binary (default: go build ./hostapp)
//	-load push|copy    how the reference gets into Fennec: `git push
//	                   --mirror` over HTTP (timed and printed), or copying
//	                   the files into the project's repository directory
//	-fetch-commits N, -push-commits N
//	                   the size of the fetch and push scenarios (100, 1000)
//	-fsck=false        skip `git fsck` of every clone (refs are still checked)
//	-work DIR, -keep   where the temporary files go, and keep them
//
// Progress goes to stderr, one line per run; the tables to stdout.
//
// The scenarios, each timed with the git CLI as the client (temporary HOME,
// no system or global configuration, the client's default protocol):
//
//   - full clone: git clone --bare;
//   - --depth 1 clone: git clone --bare --depth 1;
//   - fetch of the last 100 commits: a clone of commit N-100, prepared
//     locally outside the timing, fetches the tip;
//   - push of 1,000 new commits: prepared outside the timing with git
//     fast-import, one distinct set per run, each pushed to a new branch
//     that is deleted after the run (outside the timing), so every run sends
//     the same amount of data to a server with the same refs.
//
// Every scenario runs once cold (reported separately) and then -runs times
// warm; each run reports the wall time of the client command, the server's
// CPU time (user+sys) and its peak RSS. After each run the clone's refs are
// compared with `git ls-remote` of the server and `git fsck` checks the clone
// (the server's repository after a push), outside the timing.
//
// Each server is its own process, so its CPU and memory are its alone:
//
//   - C git: gitbench re-executes itself as `gitbench -serve-cgi ROOT -addr
//     ADDR`, a net/http server running `git http-backend` through
//     net/http/cgi (GIT_PROJECT_ROOT, GIT_HTTP_EXPORT_ALL, http.receivepack
//     true in the repository). A fresh one serves every run; GET /-/rusage
//     answers, once the requests in flight are done, its getrusage(2) SELF
//     plus CHILDREN: CPU summed, max RSS the larger of the two, which is the
//     largest single process (http-backend, upload-pack, pack-objects, ...),
//     not the sum of those running at once. net/http/cgi refuses chunked
//     request bodies, so large pushes are spooled to a temporary file first.
//   - Fennec: the real binary (`fennec serve`) with its own data directory;
//     gitbench signs in as root, creates a project, puts the reference into
//     it, and runs `fennec repo gc` on it when the binary has that command.
//     The server is restarted before each scenario's cold run and stays up
//     for the warm runs. CPU is the utime+stime (plus waited children's)
//     delta of /proc/PID/stat around a run; peak RSS is VmHWM of
//     /proc/PID/status after resetting it through /proc/PID/clear_refs.
//
// The target of the issue is every scenario within 1.5x of C git's wall time
// and the server's memory within 2x; a missed target is reported in the
// table, and only errors (a failed command, a wrong ref, fsck) make the exit
// status non-zero. Linux only (/proc).
package main
