package dsl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// DecodeConfig decodes a Hugging Face config.json into config-time values
// (integers stay int64, other numbers float64). It errors on invalid JSON or
// a top level that is not an object.
//
// Python's json module writes float("inf") as the bare token Infinity
// (transformers saves Mamba2's time_step_limit (0.0, inf) so); outside
// strings, Infinity and -Infinity read as ±Inf.
func DecodeConfig(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(pythonInfinity(data)))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	raw, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the top level must be a JSON object, got %s", jsonKind(top))
	}
	return normalizeJSON(raw).(map[string]any), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// configFields returns the file's config fields in source order, without
// its requirements (configRequires).
func configFields(f *File) []*Field {
	var out []*Field
	for _, it := range f.Items {
		if it.Config != nil {
			for _, fd := range it.Config.Fields {
				if fd.Require == nil {
					out = append(out, fd)
				}
			}
		}
	}
	return out
}

// configRequires returns the file's config requirements in source order
// (an extending family's after its parents').
func configRequires(f *File) []*Field {
	var out []*Field
	for _, it := range f.Items {
		if it.Config != nil {
			for _, fd := range it.Config.Fields {
				if fd.Require != nil {
					out = append(out, fd)
				}
			}
		}
	}
	return out
}

// require checks a config requirement over the bound config: its condition
// must be a bool; false refuses the config with the requirement's message.
func (s *scope) require(r *Require) error {
	v, err := s.expr(r.Cond)
	if err != nil {
		return err
	}
	ok, isBool := v.(bool)
	if !isBool {
		return errorf(r.Cond.Pos, "require's condition must be bool, got %s", typeName(v))
	}
	if ok {
		return nil
	}
	var sb strings.Builder
	for _, e := range r.Message {
		v, err := s.expr(e)
		if err != nil {
			return err
		}
		if str, isStr := v.(string); isStr {
			sb.WriteString(str)
		} else {
			sb.WriteString(show(v))
		}
	}
	return errorf(r.Pos, "%s", sb.String())
}

// EvalConfig binds the file's config fields against a decoded config.json
// (see DecodeConfig): a present, non-null value is checked against the
// field's type; otherwise the default expression is evaluated over the
// fields before it. Then every requirement (require COND, ...) is checked
// over the whole config. It errors, with the .arch position, on a missing
// required field, a wrong type, a failing default or an unmet requirement.
func EvalConfig(f *File, raw map[string]any) (map[string]any, error) {
	cfg := map[string]any{}
	s := &scope{cfg: cfg}
	for _, fd := range configFields(f) {
		var v any
		if rv, ok := raw[fd.Name]; ok && rv != nil {
			cv, err := coerce(rv, fd.Type.Name)
			if err != nil {
				return nil, errorf(fd.Pos, "config.json field %q: %v", fd.Name, err)
			}
			if n, ok := cv.(int64); ok && n < 0 && sizeName(fd.Name) {
				return nil, errorf(fd.Pos, "config.json field %q is %d: a size or count cannot be negative", fd.Name, n)
			}
			if x, ok := cv.(float64); ok && (math.IsInf(x, 0) || math.IsNaN(x)) {
				// Only list entries are infinite in HF's configs (time_step_limit's
				// (0.0, inf)); a scalar eps, theta, scale or multiplier that is
				// would reach the model as NaN logits, far from the key.
				return nil, errorf(fd.Pos, "config.json field %q is %v: a number field must be finite", fd.Name, x)
			}
			v = cv
		} else if fd.Default != nil {
			dv, err := s.expr(fd.Default)
			if err != nil {
				return nil, err
			}
			if v, err = coerce(dv, fd.Type.Name); err != nil {
				return nil, errorf(fd.Default.Pos, "default of %q: %v", fd.Name, err)
			}
		} else {
			return nil, errorf(fd.Pos, "config.json lacks required field %q", fd.Name)
		}
		cfg[fd.Name] = v
	}
	for _, fd := range configRequires(f) {
		if err := s.require(fd.Require); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// Matches reports whether the family handles a config: its model_type is
// listed in a match clause whose condition (if any) holds. cfg is the result
// of EvalConfig; modelType comes from config.json.
func Matches(f *File, modelType string, cfg map[string]any) (bool, error) {
	s := &scope{cfg: cfg}
	for _, it := range f.Items {
		m := it.Match
		if m == nil || !contains(m.ModelTypes, modelType) {
			continue
		}
		if m.Cond == nil {
			return true, nil
		}
		v, err := s.expr(m.Cond)
		if err != nil {
			return false, err
		}
		b, ok := v.(bool)
		if !ok {
			return false, errorf(m.Cond.Pos, "match condition must be bool, got %s", typeName(v))
		}
		if b {
			return true, nil
		}
	}
	return false, nil
}

// Nesting says where a config of model_type modelType keeps the family's
// model, from the first match clause that lists it: key, the config.json
// object the config block binds (a wrapper's text_config; "" for the top
// level), and scope, the prefix of the family's weights in the checkpoint
// (its match clause's scope path and a dot, "language_model."; "" for
// none).
func Nesting(f *File, modelType string) (key, scope string) {
	for _, it := range f.Items {
		m := it.Match
		if m == nil || !contains(m.ModelTypes, modelType) {
			continue
		}
		if m.Nest == nil {
			return "", ""
		}
		if m.Nest.Scope != nil {
			for _, sg := range m.Nest.Scope.Segs {
				scope += sg.Name + "."
			}
		}
		return m.Nest.Key, scope
	}
	return "", ""
}

// NestingAs is the family's name prefix for the weights a config of
// model_type modelType keeps under its match clause's scope (`scope
// model.language_model as model`: "model."), "" when the scope is a plain
// prefix of the family's names or there is none.
func NestingAs(f *File, modelType string) string {
	for _, it := range f.Items {
		m := it.Match
		if m == nil || !contains(m.ModelTypes, modelType) {
			continue
		}
		as := ""
		if m.Nest != nil && m.Nest.As != nil {
			for _, sg := range m.Nest.As.Segs {
				as += sg.Name + "."
			}
		}
		return as
	}
	return ""
}

// ModelTypes lists the model_type values the family's match clauses name,
// each with its condition's source text position if conditional.
// MatchConditions lists the positions of the match clauses that list
// modelType with a condition, for an error that says which conditions a
// config failed.
func MatchConditions(f *File, modelType string) []string {
	var out []string
	for _, it := range f.Items {
		if m := it.Match; m != nil && m.Cond != nil && contains(m.ModelTypes, modelType) {
			out = append(out, m.Cond.Pos.String())
		}
	}
	return out
}

func ModelTypes(f *File) []string {
	var out []string
	for _, it := range f.Items {
		if it.Match != nil {
			for _, t := range it.Match.ModelTypes {
				if it.Match.Cond != nil {
					t += " (conditional)"
				}
				out = append(out, t)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pythonInfinity rewrites the bare tokens Infinity and -Infinity outside
// JSON strings as 1e999 and -1e999, numbers that decode to ±Inf
// (normalizeJSON keeps json.Number's out-of-range float).
func pythonInfinity(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out []byte
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			out = append(out, "1e999"...)
			i += len("Infinity") - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// sizeName reports whether a config field's name says it is a size or a
// count (hidden_size, head_dim, num_attention_heads, n_routed_experts,
// kv_lora_rank, lru_width, num_hidden_layers): HF's names for them, none
// of which a config may set negative. A negative one would otherwise reach
// a primitive and be reported there, far from the key.
func sizeName(name string) bool {
	for _, suffix := range []string{"_size", "_dim", "_heads", "_layers", "_experts", "_rank", "_width"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return strings.HasPrefix(name, "num_") || strings.HasPrefix(name, "n_")
}
