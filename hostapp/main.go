// Command fennec is the stock Fennec host: the core with the standard
// modules, one binary, an embedded store, no other server needed.
package main

import (
	"os"

	"github.com/fennec-forge/fennec/modules/stock"
)

func main() {
	os.Exit(run(os.Args[1:], stock.Modules(), os.Stdout, os.Stderr))
}
