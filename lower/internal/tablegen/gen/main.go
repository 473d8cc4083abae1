// Command gen writes lower/primitives_gen.go and lower/storage_gen.go from
// lower/primitives.json and lower/storage_formats.json (package tablegen).
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
	s, err := os.ReadFile("storage_formats.json")
	if err != nil {
		return err
	}
	prims, storage, err := tablegen.Generate(p, s)
	if err != nil {
		return err
	}
	if err := os.WriteFile("primitives_gen.go", prims, 0o644); err != nil {
		return err
	}
	return os.WriteFile("storage_gen.go", storage, 0o644)
}
