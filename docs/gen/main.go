// Command gen rewrites the generated sections of docs/arch-language.md
// (`go generate ./docs` runs it in docs/): see package docs.
package main

import (
	"fmt"
	"os"

	"github.com/archc/archc/docs"
)

func main() {
	const file = "arch-language.md"
	doc, err := os.ReadFile(file)
	if err == nil {
		doc, err = docs.Update(doc, docs.Sections())
	}
	if err == nil {
		err = os.WriteFile(file, doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docs/gen:", err)
		os.Exit(1)
	}
}
