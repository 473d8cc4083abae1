package chat

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// The jinja engine (v1.8.0; later versions need Go 1.27) encodes
// `tojson(indent=N)` through encoding/json, which sorts dict keys and
// escapes <, > and &; transformers' tojson is json.dumps(x,
// ensure_ascii=False, indent=N), which keeps the dict's order. Llama 3.x
// and Granite render tool definitions that way. indentedTojson rewrites
// `PATH | tojson(indent=N)` (PATH a variable, attribute or item path) into
// a call of tojsonIndentFn, a global that encodes as json.dumps does.
var indentedTojson = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]\[]*\])*)\s*\|\s*tojson\(\s*indent\s*=\s*(\d+)\s*\)`)

const tojsonIndentFn = "__archc_tojson_indent"

func rewriteTojson(src string) string {
	return indentedTojson.ReplaceAllString(src, tojsonIndentFn+"($1, $2)")
}

var tojsonIndent = jinja.NewCallable(tojsonIndentFn, func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 2 || !args[1].IsInt() {
		return jinja.Undefined(), fmt.Errorf("tojson: want a value and an integer indent")
	}
	var b strings.Builder
	if err := encodeIndented(&b, args[0], strings.Repeat(" ", int(args[1].AsInt())), "\n"); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(b.String()), nil
})

// encodeIndented writes v as Python's json.dumps(v, ensure_ascii=False,
// indent=len(pad)): items on their own lines, "," then newline between
// them, ": " after keys, empty containers as [] and {}.
func encodeIndented(b *strings.Builder, v jinja.Value, pad, nl string) error {
	inner := nl + pad
	switch {
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[")
		for i, it := range items {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(inner)
			if err := encodeIndented(b, it, pad, inner); err != nil {
				return err
			}
		}
		b.WriteString(nl + "]")
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if len(keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(inner)
			writeJSONString(b, k)
			b.WriteString(": ")
			x, _ := d.Get(k)
			if err := encodeIndented(b, x, pad, inner); err != nil {
				return err
			}
		}
		b.WriteString(nl + "}")
	case v.IsString():
		writeJSONString(b, v.AsString())
	case v.IsBool():
		b.WriteString(strconv.FormatBool(v.AsBool()))
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		f := v.AsFloat()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("tojson: cannot encode %v", f)
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0" // Python writes floats with a point
		}
		b.WriteString(s)
	default:
		b.WriteString("null")
	}
	return nil
}

// writeJSONString writes s as json.dumps(s, ensure_ascii=False) does.
func writeJSONString(b *strings.Builder, s string) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.WriteString(strings.TrimSuffix(sb.String(), "\n"))
}
