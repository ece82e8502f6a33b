package internal_test

import (
	"os"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// TestMain stops the PostgreSQL server the tests of several nodes start.
func TestMain(m *testing.M) { os.Exit(fennectest.Main(m)) }
