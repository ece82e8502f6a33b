package stock_test

import (
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/modules/stock"
)

// TestStockBundleValidates fails when a stock module needs a service that no
// module provides, or two provide the same one.
func TestStockBundleValidates(t *testing.T) {
	cfg := config.Default()
	cfg.Data = t.TempDir()
	if err := fennec.Validate(fennec.WithConfig(cfg), fennec.WithModules(stock.Modules()...)); err != nil {
		t.Fatalf("stock bundle does not validate: %v", err)
	}
}

// TestValidateCatchesMissingDependency shows the check above can fail: a
// module that needs a service nobody provides is refused.
func TestValidateCatchesMissingDependency(t *testing.T) {
	type missing interface{ Nothing() }
	broken := fennec.NewModule("broken", fennec.ProvideRoutes(func(m missing) fennec.Routes { return fennec.Routes{Name: "broken"} }))
	cfg := config.Default()
	cfg.Data = t.TempDir()
	if err := fennec.Validate(fennec.WithConfig(cfg), fennec.WithModules(append(stock.Modules(), broken)...)); err == nil {
		t.Fatal("Validate accepted a module with an unmet dependency")
	}
}
