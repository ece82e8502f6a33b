package internal_test

import (
	"os"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// TestMain stops the PostgreSQL server the suite runs on under
// FENNEC_TEST_STORE=postgres, once every test is done.
func TestMain(m *testing.M) { os.Exit(fennectest.Main(m)) }
