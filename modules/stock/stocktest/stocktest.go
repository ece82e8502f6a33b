// Package stocktest starts the full stock application for black-box tests:
// fennectest with every stock module.
package stocktest

import (
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock"
)

// Start runs the stock application (see fennectest.Start).
func Start(t testing.TB, opts ...fennectest.Option) *fennectest.Server {
	t.Helper()
	return fennectest.Start(t, append([]fennectest.Option{fennectest.WithModules(stock.Modules()...)}, opts...)...)
}
