package testmodels

import (
	"os"
	"testing"
)

// TwinCommand is what writes the fixtures' GGUF twins (model.f32.gguf,
// model.q8_0.gguf), which are generated, not committed.
const TwinCommand = "python3 golden/make_gguf_twins.py (with gguf, safetensors and numpy as pinned in scripts/requirements-test.txt; scripts/test.sh runs it)"

// GGUFTwin returns path, a fixture's GGUF twin, failing the test (on a
// developer machine as under CI) when the file is missing, naming the
// command that writes it.
func GGUFTwin(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: GGUF twins are generated, not committed: run %s", path, TwinCommand)
	}
	return path
}
