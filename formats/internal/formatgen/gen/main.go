// Command gen writes formats/formats_gen.go from formats/formats.json
// (package formatgen). Run it through `go generate ./formats`.
package main

import (
	"fmt"
	"os"

	"github.com/archc/archc/formats/internal/formatgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "formatgen:", err)
		os.Exit(1)
	}
}

// run works in the current directory, formats/ under go generate.
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
