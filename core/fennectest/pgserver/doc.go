// Package pgserver runs a private PostgreSQL server for tests: a cluster
// made by initdb in a temporary directory, a postmaster on a free loopback
// port with its own unix socket directory, one database per test, and
// everything stopped and removed when the test (or the test process) ends.
//
// Start gives a test its own server, which it may Kill and Restart to test
// crashes; Shared gives every test of a process one server, so that a
// package's tests pay initdb once. A package that uses Shared stops it from
// its TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		pgserver.StopShared()
//		os.Exit(code)
//	}
//
// Run as root (as in CI containers), initdb and postgres, which refuse
// root, run as the postgres system user that Debian's package creates.
// Without PostgreSQL a test is skipped, saying so, unless
// FENNEC_REQUIRE_POSTGRES=1 or CI is set: there it fails, so CI can never
// pass by skipping. .ci/run installs Debian's postgresql.
//
// It imports no other package of this repository, so any test may use it.
package pgserver
