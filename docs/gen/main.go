// Command gen rewrites the generated sections of docs.Files
// (`go generate ./docs` runs it in docs/): see package docs.
package main

import (
	"fmt"
	"os"

	"github.com/archc/archc/docs"
)

func main() {
	sections, err := docs.Sections()
	for file := range docs.Files {
		var doc []byte
		if err == nil {
			doc, err = os.ReadFile(file)
		}
		if err == nil {
			doc, err = docs.Update(doc, sections)
		}
		if err == nil {
			err = os.WriteFile(file, doc, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docs/gen:", err)
		os.Exit(1)
	}
}
