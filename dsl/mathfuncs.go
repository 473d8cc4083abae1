package dsl

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// configFuncs are the math functions of config expressions (config
// defaults, match conditions, gguf sections): one number in (an int is
// converted), a float out, none in gives none. They compute config-time
// values a Hugging Face config derives with Python's math module, such as
// YaRN's mscale 0.1·m·log(factor) + 1 (DeepSeek-V2's softmax scale).
var configFuncs = map[string]func(float64) (float64, bool){
	"log": func(x float64) (float64, bool) { return math.Log(x), x > 0 }, // log(x): natural logarithm (math.log), x > 0
}

// configCall evaluates a call of a configFuncs function.
func (s *scope) configCall(c *Call, fn func(float64) (float64, bool)) (any, error) {
	if len(c.Args) != 1 || c.Args[0].Name != "" {
		return nil, errorf(c.Pos, "%s takes one positional argument", c.Name)
	}
	v, err := s.expr(c.Args[0].Value)
	if err != nil {
		return nil, err
	}
	var x float64
	switch n := v.(type) {
	case nil:
		return nil, nil
	case int64:
		x = float64(n)
	case float64:
		x = n
	default:
		return nil, errorf(c.Args[0].Pos, "%s needs a number, got %s %s", c.Name, typeName(v), show(v))
	}
	out, ok := fn(x)
	if !ok {
		return nil, errorf(c.Args[0].Pos, "%s(%s) is not defined", c.Name, show(v))
	}
	return out, nil
}

// intFunc is the name of the config builtin int(x): a number truncated
// toward zero, an int (Python's int(); none gives none), for sizes a
// Hugging Face module derives with it, such as Lfm2MLP's
// int(2 * intermediate_size / 3), or a string's decimal int (surrounding
// spaces ignored, as Python's int("3 ")), for a layer list a config
// spells as a string (Step3p5's moe_layers_enum "3,4,5").
const intFunc = "int"

// intCall evaluates int(x).
func (s *scope) intCall(c *Call) (any, error) {
	if len(c.Args) != 1 || c.Args[0].Name != "" {
		return nil, errorf(c.Pos, "%s takes one positional argument", c.Name)
	}
	v, err := s.expr(c.Args[0].Value)
	switch n := v.(type) {
	case nil, int64:
		return v, err
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) || math.Abs(n) > 1<<62 {
			return nil, errorf(c.Args[0].Pos, "%s(%s) is not an int", c.Name, show(v))
		}
		return int64(n), nil
	case string:
		k, perr := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		if perr != nil {
			return nil, errorf(c.Args[0].Pos, "%s(%s) is not an int", c.Name, show(v))
		}
		return k, nil
	}
	return nil, errorf(c.Args[0].Pos, "%s needs a number or a string, got %s %s", c.Name, typeName(v), show(v))
}

// splitFunc is the name of the config builtin split(s, sep): the list of
// the pieces of string s between the separators sep (Python's
// s.split(sep); none gives none), for a list a config spells as one string
// (Step3p5's moe_layers_enum "3,4,5": [int(k) for k in split(moe_layers_enum, ",")]).
const splitFunc = "split"

// splitCall evaluates split(s, sep).
func (s *scope) splitCall(c *Call) (any, error) {
	if len(c.Args) != 2 || c.Args[0].Name != "" || c.Args[1].Name != "" {
		return nil, errorf(c.Pos, "%s takes two positional arguments (a string and its separator)", c.Name)
	}
	var str [2]string
	for k, a := range c.Args {
		v, err := s.expr(a.Value)
		if err != nil || v == nil {
			return nil, err
		}
		x, ok := v.(string)
		if !ok || k == 1 && x == "" {
			return nil, errorf(a.Pos, "%s needs a string and a non-empty separator, got %s %s", c.Name, typeName(v), show(v))
		}
		str[k] = x
	}
	parts := strings.Split(str[0], str[1])
	out := make([]any, len(parts))
	for k, p := range parts {
		out[k] = p
	}
	return out, nil
}

// strFunc is the name of the config builtin str(x): an int's decimal
// spelling (Python's str() of an int; a string stays itself, none gives
// none), for config.json objects keyed by layer index (JSON object keys
// are strings: Gemma 4's per_layer_config["3"] is per_layer_config[str(3)]).
const strFunc = "str"

// strCall evaluates str(x).
func (s *scope) strCall(c *Call) (any, error) {
	if len(c.Args) != 1 || c.Args[0].Name != "" {
		return nil, errorf(c.Pos, "%s takes one positional argument", c.Name)
	}
	v, err := s.expr(c.Args[0].Value)
	switch n := v.(type) {
	case nil, string:
		return v, err
	case int64:
		return fmt.Sprint(n), nil
	}
	return nil, errorf(c.Args[0].Pos, "%s needs an int, got %s %s", c.Name, typeName(v), show(v))
}

// dictFunc is the name of the config builtin dict(k: v, ...): a dict of
// the keyword arguments, without the keys whose value is none, for a value
// a family derives from config.json's (PhiMoE's LongRoPE with the short
// factors at every length) or reads from a GGUF file's metadata.
const dictFunc = "dict"

// dictCall evaluates dict(k: v, ...).
func (s *scope) dictCall(c *Call) (any, error) {
	out := map[string]any{}
	for _, a := range c.Args {
		if a.Name == "" {
			return nil, errorf(a.Pos, "%s takes keyword arguments only (name: value)", c.Name)
		}
		if _, dup := out[a.Name]; dup {
			return nil, errorf(a.Pos, "%s: key %q given twice", c.Name, a.Name)
		}
		v, err := s.expr(a.Value)
		if err != nil {
			return nil, err
		}
		if v != nil {
			out[a.Name] = v
		}
	}
	return out, nil
}

// lenFunc is the name of the config builtin len(x): the length of a list,
// a string (in characters) or a dict (none gives none), as Python's len,
// for a count a Hugging Face config derives from a list (NemotronHConfig's
// num_hidden_layers is len(layers_block_type)) or a GGUF file's metadata.
const lenFunc = "len"

// lenCall evaluates len(x).
func (s *scope) lenCall(c *Call) (any, error) {
	if len(c.Args) != 1 || c.Args[0].Name != "" {
		return nil, errorf(c.Pos, "%s takes one positional argument", c.Name)
	}
	v, err := s.expr(c.Args[0].Value)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return int64(len(x)), nil
	case string:
		return int64(len([]rune(x))), nil
	case map[string]any:
		return int64(len(x)), nil
	}
	return nil, errorf(c.Args[0].Pos, "%s needs a list, string or dict, got %s %s", c.Name, typeName(v), show(v))
}

// rangeFunc is the name of the config builtin range(n): the list of ints
// [0, 1, ..., n-1] (none for none), as Python's range, so that a family
// declares a per-layer list once, where Hugging Face's config class
// derives it:
//
//	layer_types: list = [i % 2 == 0 ? "sliding_attention" : "full_attention" for i in range(num_hidden_layers)]
//
// and blocks read layer_types[i], whether config.json gives the list or
// not.
const rangeFunc = "range"

// rangeCall evaluates range(n); n is at most maxLayers.
func (s *scope) rangeCall(c *Call) (any, error) {
	if len(c.Args) != 1 || c.Args[0].Name != "" {
		return nil, errorf(c.Pos, "%s takes one positional argument", c.Name)
	}
	v, err := s.expr(c.Args[0].Value)
	if err != nil || v == nil {
		return nil, err
	}
	n, ok := v.(int64)
	if !ok || n < 0 || n > maxLayers {
		return nil, errorf(c.Args[0].Pos, "%s needs an int in [0, %d], got %s %s", c.Name, maxLayers, typeName(v), show(v))
	}
	out := make([]any, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out, nil
}

// rootFunc is the name of the block builtin root(PATH): the weight module
// at PATH read from the file's root, not from the scope of the layer loop
// (or of an mtp module) it is called in. A family whose layer stack runs
// more than once applies a top-level weight between passes from inside the
// loop: `norm(x, root(model.norm))`.
const rootFunc = "root"

// rootCall evaluates root(PATH): PATH must be a bare weight path (its
// computed segments may read the loop variable and the config).
func (s *scope) rootCall(c *Call) (any, error) {
	if len(c.Args) != 1 || c.Args[0].Name != "" {
		return nil, errorf(c.Pos, "%s takes one positional argument", c.Name)
	}
	e := c.Args[0].Value
	var p *Path
	if e.Then == nil && len(e.Cond.Rest) == 0 && e.Cond.First.Op == "" && len(e.Cond.First.Index) == 0 {
		p = e.Cond.First.Operand.Path
	}
	if p == nil {
		return nil, errorf(e.Pos, "%s takes a weight path (model.norm)", c.Name)
	}
	_, local := s.locals[p.Segs[0].Name]
	_, field := s.cfg[p.Segs[0].Name]
	if h := p.Segs[0].Name; h != "" && (local || field || h == s.loopVar) {
		return nil, errorf(p.Pos, "%s takes a weight path from the file's root; %s is a bound name", c.Name, h)
	}
	return s.modulePath("", p.Segs, p.Pos)
}

// failFunc is the name of the builtin that stops evaluation with an error:
// fail(parts...) reports `file:line:col: <parts joined>` (strings as they
// are, other values as .arch writes them). It may stand anywhere a value
// may, in config expressions, gguf sections and blocks; since `?:`
// evaluates only the branch taken, `ok ? x : fail("...")` refuses a config
// it cannot run with a message that names the key and the value.
const failFunc = "fail"

// fail evaluates a fail(...) call: the error it reports.
func (s *scope) fail(c *Call) error {
	var sb strings.Builder
	for _, a := range c.Args {
		if a.Name != "" {
			return errorf(a.Pos, "%s takes positional arguments only", failFunc)
		}
		v, err := s.expr(a.Value)
		if err != nil {
			return err
		}
		if str, ok := v.(string); ok {
			sb.WriteString(str)
		} else {
			sb.WriteString(show(v))
		}
	}
	if sb.Len() == 0 {
		sb.WriteString("fail() called")
	}
	return errorf(c.Pos, "%s", sb.String())
}

// maxFunc is the name of the config builtin max(l) or max(a, b, ...): the
// largest of a non-empty list of numbers, or of its arguments (Python's
// max; none gives none), for a value a GGUF file stores per layer where a
// Hugging Face config has one (llama.cpp's hybrids write head_count_kv as
// a list with 0 for the recurrent layers: max gives the attention layers').
const maxFunc = "max"

// maxCall evaluates max(...).
func (s *scope) maxCall(c *Call) (any, error) {
	var vals []any
	for _, a := range c.Args {
		if a.Name != "" {
			return nil, errorf(a.Pos, "%s takes positional arguments only", c.Name)
		}
		v, err := s.expr(a.Value)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, nil
		}
		if l, ok := v.([]any); ok && len(c.Args) == 1 {
			vals = l
			break
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, errorf(c.Pos, "%s needs a non-empty list or some numbers", c.Name)
	}
	var best any
	for i, v := range vals {
		x, ok := number(v)
		if !ok {
			return nil, errorf(c.Pos, "%s needs numbers, got %s %s", c.Name, typeName(v), show(v))
		}
		if b, _ := number(best); i == 0 || x > b {
			best = v
		}
	}
	return best, nil
}
