// Command gen writes rt/formats/formats_gen.go from rt/formats/formats.json
// (package formatgen). Run it through `go generate ./rt/formats`.
package main

import (
	"fmt"
	"os"

	"github.com/archc/archc/rt/formats/internal/formatgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "formatgen:", err)
		os.Exit(1)
	}
}

// run works in the current directory, rt/formats/ under go generate.
func run() error {
	data, err := os.ReadFile("formats.json")
	if err != nil {
		return err
	}
	src, err := formatgen.Generate(data)
	if err != nil {
		return err
	}
	return os.WriteFile("formats_gen.go", src, 0o644)
}
