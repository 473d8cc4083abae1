package formats

// The -update flag refreshes golden files across the module
// (go test ./... -update); every test binary must accept it.
import _ "github.com/archc/archc/internal/golden"
