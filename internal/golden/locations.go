package golden

import (
	"bytes"
	"regexp"
)

// fileLineCol matches an MLIR file-line-column location inside loc(...):
// a quoted file name followed by :line:col ("llama.arch":12:7).
var fileLineCol = regexp.MustCompile(`("(?:[^"\\]|\\.)*"):[0-9]+:[0-9]+`)

// StripLocations returns MLIR text with the line and column of every
// file location removed and everything else kept byte for byte:
// `loc("model.norm"("llama.arch":62:12))` becomes
// `loc("model.norm"("llama.arch"))`. Only the part of each line from its
// first ` loc(` on is rewritten (and `#loc` alias definitions, whose whole
// line is a location), so string attributes of the ops are never touched.
// A structural golden stores and compares this text: it changes when ops,
// their names or the .arch file they come from change, not when an edit
// moves lines of a .arch file. The result is deterministic and idempotent.
func StripLocations(mlir []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(mlir))
	for len(mlir) > 0 {
		line := mlir
		if i := bytes.IndexByte(mlir, '\n'); i >= 0 {
			line, mlir = mlir[:i+1], mlir[i+1:]
		} else {
			mlir = nil
		}
		at := bytes.Index(line, []byte(" loc("))
		if bytes.HasPrefix(line, []byte("#loc")) {
			at = 0
		}
		if at < 0 {
			out.Write(line)
			continue
		}
		out.Write(line[:at])
		out.Write(fileLineCol.ReplaceAll(line[at:], []byte("$1")))
	}
	return out.Bytes()
}
