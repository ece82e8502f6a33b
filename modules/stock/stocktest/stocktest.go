// Package stocktest starts the full stock application for black-box tests:
// fennectest with every stock module.
package stocktest

import (
	"slices"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock"
)

// stockModules is stock.Modules(), made once per test binary: building the
// modules' options records a caller stack per constructor, ~13 ms of every
// start under -race. Module values hold only immutable options, so apps
// assembled at the same time may share them.
var stockModules = sync.OnceValue(stock.Modules)

// Start runs the stock application (see fennectest.Start).
func Start(t testing.TB, opts ...fennectest.Option) *fennectest.Server {
	t.Helper()
	return fennectest.Start(t, append([]fennectest.Option{fennectest.WithModules(slices.Clone(stockModules())...)}, opts...)...)
}
