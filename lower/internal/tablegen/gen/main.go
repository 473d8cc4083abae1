// Command gen writes lower/primitives_gen.go from lower/primitives.json
// (package tablegen).
// Run it through `go generate ./lower`.
package main

import (
	"fmt"
	"os"

	"github.com/archc/archc/lower/internal/tablegen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tablegen:", err)
		os.Exit(1)
	}
}

// run works in the current directory, lower/ under go generate.
func run() error {
	p, err := os.ReadFile("primitives.json")
	if err != nil {
		return err
	}
	prims, err := tablegen.Generate(p)
	if err != nil {
		return err
	}
	return os.WriteFile("primitives_gen.go", prims, 0o644)
}
