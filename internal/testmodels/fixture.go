package testmodels

import "path/filepath"

// Fixture returns the path of the oracle fixture name under
// golden/testdata (e.g. "llama-tied").
func Fixture(name string) string {
	root, err := repoRoot()
	if err != nil {
		return filepath.Join("golden", "testdata", name)
	}
	return filepath.Join(root, "golden", "testdata", name)
}
