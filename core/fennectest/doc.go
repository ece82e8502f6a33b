// Package fennectest runs a whole Fennec application in-process for
// black-box tests: a random loopback port, a temporary data directory with a
// real bbolt file (or, with FENNEC_TEST_STORE=postgres, a database of its
// own on a real PostgreSQL server: see StoreEnv), the administrator signed
// in through POST /session, and a ready gitlab.com/gitlab-org/api/client-go
// client. Embedders can use it for their own modules too.
//
// Like the rest of core/ it imports no module: pass the modules to run
// (modules/stock/stocktest does that for the stock bundle).
package fennectest
