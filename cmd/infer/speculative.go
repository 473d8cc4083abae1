package main

import (
	"fmt"
	"strings"

	"github.com/archc/archc/rt"
)

// speculation parses --speculative for a run on device: nil for "" (off),
// else the drafter and draft length. Kinds archc does not implement, and
// GPU devices (whose modules are built without verify entry points), are
// refused by name.
func speculation(kind string, draftMax int, device string) (*rt.Speculation, error) {
	switch {
	case kind == "":
		return nil, nil
	case device != "local-task" && device != "local-sync":
		return nil, fmt.Errorf("--speculative %s: not implemented on --device %s (the verify entry point is built and tested for CPU devices only); leave --speculative out, or use --device local-task", kind, device)
	case kind == "ngram":
		return &rt.Speculation{Drafter: rt.PromptLookup{}, DraftMax: draftMax}, nil
	case kind == "mtp", strings.HasPrefix(kind, "draft:"):
		return nil, fmt.Errorf("--speculative %s: not implemented yet (archc drafts by prompt lookup only: --speculative ngram)", kind)
	}
	return nil, fmt.Errorf("--speculative %q: unknown kind; give ngram (prompt lookup)", kind)
}
