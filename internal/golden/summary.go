package golden

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Summarize returns the structural summary of an emitted MLIR module: what
// a reviewer reads in place of the whole module, and what a structural
// golden (testdata/<fixture>/emit.summary) stores.
//
//	module @llama
//	sha256 5d41…  (of the module with line:col removed, StripLocations)
//	global param   tensor<256x64xf32> model.embed_tokens.weight
//	global mutable tensor<1x1x256x2x16xf32> kv_cache.0
//	func @decode_1(tensor<1x1xi32>, …) -> (tensor<1x256xf32>)
//	  ops 412
//	  op stablehlo.add 31
//	  at model.layers.0/layer/attn/attention 120
//
// Per function it counts the ops by name and by the `.arch` binding their
// location names (`loc("NAME"(...))`; "-" for an op without a location, as
// the entry's own index arithmetic). The digest makes any change of the
// module's bytes fail the golden, so a refactor that should leave modules
// byte-identical (STYLE.md's replay) is still checked; the counts say
// where a change is. A function whose counts are an earlier function's
// (prefill_64 beside prefill_16: the same ops at other shapes) says so in
// one line, `  as @prefill_16`, instead of repeating them. Lines are in a
// fixed order (ops and bindings sorted by name), so the output is
// deterministic for a given module.
func Summarize(mlir []byte) []byte {
	stripped := StripLocations(mlir)
	var sb strings.Builder
	var fn *funcSummary
	written := map[string]string{} // counts → the first function with them
	flush := func() {
		if fn != nil {
			fn.write(&sb, written)
			fn = nil
		}
	}
	digest := sha256.Sum256(stripped)
	header := false
	for line := range strings.Lines(string(stripped)) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "module "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "module "), " ")
			fmt.Fprintf(&sb, "module %s\nsha256 %x\n", name, digest)
			header = true
		case strings.HasPrefix(trimmed, "util.global "):
			sb.WriteString(summarizeGlobal(trimmed))
		case strings.HasPrefix(trimmed, "func.func @"):
			flush()
			fn = &funcSummary{signature: funcSignature(trimmed), ops: map[string]int{}, at: map[string]int{}}
		case fn != nil && line == "  }":
			flush()
		case fn != nil && strings.HasPrefix(trimmed, "})"):
			// The end of a region op: its location is on this line.
			if n := len(fn.open); n > 0 {
				fn.add(fn.open[n-1], binding(line))
				fn.open = fn.open[:n-1]
			}
		case fn != nil:
			switch op := opName(trimmed); {
			case op == "":
			case strings.HasSuffix(trimmed, "({"):
				fn.open = append(fn.open, op)
			default:
				fn.add(op, binding(line))
			}
		}
	}
	flush()
	if !header {
		fmt.Fprintf(&sb, "sha256 %x\n", digest)
	}
	return []byte(sb.String())
}

// funcSummary accumulates one func.func's counts.
type funcSummary struct {
	signature string
	count     int
	ops, at   map[string]int
	open      []string // region ops whose closing line (with the location) is still to come
}

// add counts one op at one binding.
func (f *funcSummary) add(op, at string) {
	f.count++
	f.ops[op]++
	f.at[at]++
}

// write prints the function's lines: signature, total, then per op and per
// binding, each sorted by name — or, when an earlier function of the
// module (written: counts → its name) had the same counts, `as @name`.
func (f *funcSummary) write(sb *strings.Builder, written map[string]string) {
	var counts strings.Builder
	fmt.Fprintf(&counts, "  ops %d\n", f.count)
	for _, k := range slices.Sorted(maps.Keys(f.ops)) {
		fmt.Fprintf(&counts, "  op %s %d\n", k, f.ops[k])
	}
	for _, k := range slices.Sorted(maps.Keys(f.at)) {
		fmt.Fprintf(&counts, "  at %s %d\n", k, f.at[k])
	}
	fmt.Fprintf(sb, "func %s\n", f.signature)
	name, _, _ := strings.Cut(f.signature, "(")
	if first, ok := written[counts.String()]; ok {
		fmt.Fprintf(sb, "  as %s\n", first)
		return
	}
	written[counts.String()] = name
	sb.WriteString(counts.String())
}

// opLine matches the op name of one MLIR operation line, generic
// ("stablehlo.add"(...)) or custom (util.global.load @x), with or without
// results.
var opLine = regexp.MustCompile(`^(?:%[^=]*= )?"?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"?`)

// opName is the name of the op on a trimmed line, or "" for a line that is
// no op (a block label, a region's closing brace).
func opName(trimmed string) string {
	if m := opLine.FindStringSubmatch(trimmed); m != nil {
		return m[1]
	}
	return ""
}

// locName matches the name of a named location: ` loc("NAME"(`.
var locName = regexp.MustCompile(` loc\("((?:[^"\\]|\\.)*)"\(`)

// binding is the name of the .arch binding an op line's location carries,
// "-" when it has none.
func binding(line string) string {
	if m := locName.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return "-"
}

// funcSignature is `@name(arg types) -> (result types)` of a func.func line,
// the SSA argument names dropped.
func funcSignature(trimmed string) string {
	s := strings.TrimPrefix(trimmed, "func.func ")
	s = strings.TrimSuffix(s, " {")
	return argName.ReplaceAllString(s, "")
}

// argName matches `%arg3: ` in a signature.
var argName = regexp.MustCompile(`%[A-Za-z0-9_]+: `)

// summarizeGlobal is the line of one util.global: kind, type and name.
func summarizeGlobal(trimmed string) string {
	kind := "param"
	if strings.Contains(trimmed, " mutable ") {
		kind = "mutable"
	}
	name := ""
	if i := strings.IndexByte(trimmed, '@'); i >= 0 {
		name = trimmed[i+1:]
		if strings.HasPrefix(name, `"`) {
			if j := strings.Index(name[1:], `"`); j >= 0 {
				name = name[1 : j+1]
			}
		} else if j := strings.IndexAny(name, " ="); j >= 0 {
			name = name[:j]
		}
	}
	typ := ""
	if i := strings.LastIndex(trimmed, " : "); i >= 0 {
		typ = trimmed[i+3:]
	}
	return fmt.Sprintf("global %s %s %s\n", kind, typ, name)
}
