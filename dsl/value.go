package dsl

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// Config-time values are plain Go values: nil (none), int64, float64, bool,
// string, map[string]any (dict) and []any (list). Graph-time values are
// *ir.Node (tensors) and module (weight module paths).

// module is a weight module path such as "model.layers.0.self_attn.q_proj",
// with the position of the .arch path expression that named it (the
// position its weights carry into the IR).
type module struct {
	path string
	pos  lexer.Position
	// keyword: passed to an optional parameter (attention's sinks): the
	// node keeps its hierarchical name instead of taking the module's
	keyword bool
}

// normalizeJSON converts a decoded config.json value (decoded with
// json.Decoder.UseNumber) into a config-time value.
func normalizeJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
		return v
	case map[string]any:
		if f, ok := taggedFloat(v); ok {
			return f
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normalizeJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalizeJSON(e)
		}
		return out
	}
	return v
}

// typeName names a value's kind for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "none"
	case int64:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	case string:
		return "string"
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	case *ir.Node:
		return "tensor"
	case module:
		return "weight module"
	}
	return fmt.Sprintf("%T", v)
}

// show formats a config-time value the way it appears in .arch source
// (ir.FormatValue), a tensor as its type and a weight module as its path.
func show(v any) string {
	switch v := v.(type) {
	case *ir.Node:
		return v.Type.String() // callers print typeName(v) ("tensor") before it
	case module:
		return v.path
	}
	return ir.FormatValue(v)
}

// coerce converts v to a config field's declared type, or reports why not.
// nil passes for every type (none).
func coerce(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "any":
		return v, nil
	case "int":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
				return int64(x), nil
			}
		}
	case "float":
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case "bool":
		if x, ok := v.(bool); ok {
			return x, nil
		}
	case "string":
		if x, ok := v.(string); ok {
			return x, nil
		}
	case "dict":
		if x, ok := v.(map[string]any); ok {
			return x, nil
		}
	case "list":
		if x, ok := v.([]any); ok {
			return x, nil
		}
	}
	return nil, fmt.Errorf("want %s, got %s %s", typ, typeName(v), show(v))
}

// taggedFloat reads transformers' encoding of a float JSON cannot hold,
// {"__float__": "Infinity"} (or "-Infinity", "NaN"), as PreTrainedConfig
// writes Mamba2's time_step_limit (0.0, inf).
func taggedFloat(m map[string]any) (float64, bool) {
	s, ok := m["__float__"].(string)
	if !ok || len(m) != 1 {
		return 0, false
	}
	switch s {
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	case "NaN":
		return math.NaN(), true
	}
	return 0, false
}
