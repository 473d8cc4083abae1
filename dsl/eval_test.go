package dsl

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// evalConfigExpr evaluates src as a config expression over cfg and returns
// the value with its exact Go type (int64, float64, bool, string, nil, dict).
func evalConfigExpr(t *testing.T, src string, cfg map[string]any) (any, error) {
	t.Helper()
	f, err := Parse("expr.arch", []byte("arch e { config { v: dict = "+src+" } }"))
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return (&scope{cfg: cfg}).expr(configFields(f)[0].Default)
}

func TestConfigExpr(t *testing.T) {
	cfg := map[string]any{
		"n":       int64(7),
		"f":       2.5,
		"s":       "b",
		"nothing": nil,
		"rope":    map[string]any{"rope_theta": 500000.0, "factor": int64(8), "inner": nil},
	}
	for _, tc := range []struct {
		src     string
		want    any
		wantErr string
	}{
		// ?? picks the right side only for none.
		{src: "none ?? 3", want: int64(3)},
		{src: "nothing ?? 3", want: int64(3)},
		{src: "n ?? 3", want: int64(7)},
		{src: "false ?? true", want: false},
		{src: "nothing ?? nothing ?? 1.5", want: 1.5},
		// Dict access: present key, missing key (none), none propagates.
		{src: "rope.rope_theta", want: 500000.0},
		{src: "rope.missing", want: nil},
		{src: "rope.inner.deeper", want: nil},
		{src: "nothing.rope_theta", want: nil},
		{src: "nothing.a.b.c ?? 10000.0", want: 10000.0},
		{src: "rope.rope_theta ?? 10000.0", want: 500000.0},
		{src: "n.x", wantErr: "expr.arch:1:31: n is int, not a dict"},
		{src: "nope", wantErr: `unknown name "nope" in a config expression`},
		// // and % floor like Python; / is always float.
		{src: "7 // 2", want: int64(3)},
		{src: "-7 // 2", want: int64(-4)},
		{src: "7 // -2", want: int64(-4)},
		{src: "-7 // -2", want: int64(3)},
		{src: "-8 // 2", want: int64(-4)},
		{src: "-7 % 2", want: int64(1)},
		{src: "7 % -2", want: int64(-1)},
		{src: "-8 % 3", want: int64(1)},
		{src: "7 / 2", want: 3.5},
		{src: "4 / 2", want: 2.0},
		{src: "7.0 // 2", wantErr: "operator // needs ints, got float and int"},
		{src: "1 // 0", wantErr: "division by zero"},
		{src: "1 % 0", wantErr: "division by zero"},
		{src: "1 / 0", wantErr: "division by zero"},
		// ** is an int for int ** non-negative int, else a float.
		{src: "2 ** 10", want: int64(1024)},
		{src: "3 ** 0", want: int64(1)},
		{src: "(-2) ** 3", want: int64(-8)},
		{src: "2 ** -1", want: 0.5},
		{src: "4 ** 0.5", want: 2.0},
		{src: "f ** 2", want: 6.25},
		// Precedence and associativity.
		{src: "1 + 2 * 3 ** 2", want: int64(19)},
		{src: "2 ** 3 ** 2", want: int64(512)},
		{src: "(2 ** 3) ** 2", want: int64(64)},
		{src: "10 - 4 - 3", want: int64(3)},
		{src: "100 // 10 // 5", want: int64(2)},
		{src: "2 * 3 + 4 * 5", want: int64(26)},
		{src: "(1 + 2) * 3", want: int64(9)},
		{src: "-2 ** 2", want: int64(4)}, // unary minus binds its operand first (unlike Python)
		{src: "1 + 2 == 3", want: true},
		{src: "1 < 2 == true", want: true},
		{src: "true || false && false", want: true},
		{src: "(true || false) && false", want: false},
		{src: "nothing ?? 1 + 1", want: int64(2)}, // ?? binds loosest
		{src: "n > 3 ? n * 2 : 0", want: int64(14)},
		{src: "n > 30 ? 1 : n < 0 ? 2 : 3", want: int64(3)},
		// Mixed int and float arithmetic gives float; ints stay ints.
		{src: "n + 1", want: int64(8)},
		{src: "n + 0.5", want: 7.5},
		{src: "n * f", want: 17.5},
		{src: "n - 7", want: int64(0)},
		// Comparisons and equality across kinds.
		{src: "1 == 1.0", want: true},
		{src: "s == \"b\"", want: true},
		{src: "s != \"b\"", want: false},
		{src: "nothing == none", want: true},
		{src: "n == none", want: false},
		{src: "none == 0", want: false},
		{src: "rope == rope", want: false}, // dicts never compare equal
		{src: "2.5 >= f", want: true},
		// || and && short-circuit: the right side of true || and false && is not evaluated.
		{src: "true || nothing > 1", want: true},
		{src: "false && nothing.x > 1", want: false},
		{src: "nothing != none && nothing.x > 1", want: false},
		{src: "n > 3 && n < 10 || nope", want: true},
		{src: "false || n > 3 && s == \"b\"", want: true},
		{src: "true && nothing > 1", wantErr: "operator > needs numbers"},
		{src: "1 && true", wantErr: "operator && needs bools, got int and bool"},
		// fail(...) reports its parts joined, at its position; ?: evaluates only the branch taken.
		{src: "n > 3 ? n : fail(\"never\")", want: int64(7)},
		{src: "n < 3 ? n : fail(\"n = \", n, \", want < 3; rope \", rope.factor)", wantErr: "n = 7, want < 3; rope 8"},
		{src: "s == \"b\" || fail(\"s is \", s)", want: true},
		{src: "fail()", wantErr: "fail() called"},
		// An operator's error names the config names among its operands.
		{src: "nothing > 1", wantErr: "operator > needs numbers, got none none and int 1 (nothing is none)"},
		{src: "n % (n - 7)", wantErr: "division by zero"},
		{src: "n + s", wantErr: "(n is 7, s is \"b\")"},
		// in: list membership (by ==), dict keys, substrings; none holds nothing.
		{src: "n in [1, 7, 9]", want: true},
		{src: "7.0 in [1, 7]", want: true},
		{src: "n in [1, 2]", want: false},
		{src: "n in []", want: false},
		{src: "n in nothing", want: false},
		{src: "n + 1 in [8]", want: true},
		{src: "!(n in [7]) || false", want: false},
		{src: "\"factor\" in rope", want: true},
		{src: "\"beta\" in rope", want: false},
		{src: "\"il\" in \"silu\"", want: true},
		{src: "n in 7", wantErr: "operator in needs a list, dict, string or none on its right, got int 7"},
		{src: "1 in \"a1\"", wantErr: "operator in on a string needs a string, got int 1"},
		// String indexing: one character (Nemotron-H's hybrid_override_pattern).
		{src: "\"M-M*\"[1]", want: "-"},
		{src: "\"M-M*\"[-1]", want: "*"},
		{src: "\"M-\"[2]", wantErr: "string index 2 out of range (length 2)"},
		{src: "s[1]", wantErr: `string index 1 out of range (length 1) (s is "b")`},
		// A string "-" or "!" is a string, not the prefix operator (Nemotron-H's MLP layer "-").
		{src: "\"M-\"[1] == \"-\"", want: true},
		{src: "\"-\" == s", want: false},
		{src: "[\"!\", \"-\"]", want: []any{"!", "-"}},
		{src: "s[\"a\"]", wantErr: "string index must be an int"},
		// Unary operators.
		{src: "-n", want: int64(-7)},
		{src: "-f", want: -2.5},
		{src: "!(n > 3)", want: false},
		{src: "-s", wantErr: "cannot negate string"},
		{src: "!n", wantErr: "operator ! needs bool, got int"},
		// Operators on mismatched kinds.
		{src: "n + s", wantErr: `operator + needs numbers, got int 7 and string "b"`},
		{src: "nothing + 1", wantErr: "operator + needs numbers, got none none and int 1"},
		{src: "true && 1", wantErr: "operator && needs bools, got bool and int"},
		{src: "n < s", wantErr: "operator < needs numbers"},
		{src: "n ? 1 : 2", wantErr: "condition of ?: must be bool, got int 7"},
		{src: "rope(1)", wantErr: "primitive call rope(...) is not allowed in a config expression"},
		// log: natural logarithm of a number; none propagates.
		{src: "log(1)", want: 0.0},
		{src: "0.1 * log(rope.factor) + 1", want: 0.1*math.Log(8) + 1},
		{src: "log(nothing)", want: nil},
		{src: "log(0)", wantErr: "log(0) is not defined"},
		{src: "log(s)", wantErr: `log needs a number, got string "b"`},
		{src: "int(2 * 128 / 3)", want: int64(85)},
		{src: "int(-2.5)", want: int64(-2)},
		{src: "int(7)", want: int64(7)},
		{src: "int(nothing)", want: nil},
		{src: "int(s)", wantErr: `int("b") is not an int`},
		{src: "int(\" 12 \")", want: int64(12)},
		{src: "int(rope)", wantErr: `int needs a number or a string, got dict`},
		// split: Python's str.split(sep); none gives none.
		{src: "split(\"3,4, 5\", \",\")", want: []any{"3", "4", " 5"}},
		{src: "[int(k) for k in split(\"3,4, 5\", \",\")]", want: []any{int64(3), int64(4), int64(5)}},
		{src: "split(\"7\", \",\")", want: []any{"7"}},
		{src: "split(nothing, \",\")", want: nil},
		{src: "split(s, \"\")", wantErr: `split needs a string and a non-empty separator, got string ""`},
		{src: "split(n, \",\")", wantErr: `split needs a string and a non-empty separator, got int 7`},
		// str: an int's decimal key (JSON object keys); max: a list's largest number.
		{src: "str(12)", want: "12"},
		{src: "str(s)", want: "b"},
		{src: "str(nothing)", want: nil},
		{src: "str(f)", wantErr: "str needs an int, got float 2.5"},
		{src: "max([3, -1, 7, 2])", want: int64(7)},
		{src: "max([1, 2.5])", want: 2.5},
		{src: "max([k == 2 ? k : -1 for k in range(4)])", want: int64(2)},
		{src: "max(nothing)", want: nil},
		{src: "max([])", wantErr: "max needs a non-empty list or some numbers"},
		{src: "max([1, s])", wantErr: `max needs numbers, got string "b"`},
		{src: "log(1, 2)", wantErr: "log takes one positional argument"},
		// len: a list's, a string's (characters) or a dict's length; none propagates.
		{src: "len([1, 2, 3])", want: int64(3)},
		{src: "len(\"M-M*E\")", want: int64(5)},
		{src: "len(rope)", want: int64(3)},
		{src: "len(nothing)", want: nil},
		{src: "len(n)", wantErr: "len needs a list, string or dict, got int 7"},
		{src: "[i for i in range(len(\"M*\"))]", want: []any{int64(0), int64(1)}},
	} {
		got, err := evalConfigExpr(t, tc.src, cfg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got (%v, %v), want error containing %q", tc.src, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.src, diff)
		}
	}
}

// TestEvalConfigRequire: a requirement is checked once every field is
// bound (it reads fields declared after it), whatever config.json holds; an
// unmet one refuses the config with its parts joined at its position, and a
// condition that is not a bool is an error naming what it is.
func TestEvalConfigRequire(t *testing.T) {
	const src = `arch c {
  config {
    alibi: bool = false
    require !alibi || n > 2, "alibi with n ", n, ": archc reads configs without alibi"
    n:     int  = 1
    require n, "never"
  }
}`
	f, err := Parse("c.arch", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ json, wantErr string }{
		{json: `{"alibi": true, "n": 4}`, wantErr: `c.arch:6:13: require's condition must be bool, got int`},
		{json: `{"alibi": true}`, wantErr: `c.arch:4:5: alibi with n 1: archc reads configs without alibi`},
	} {
		raw, err := DecodeConfig([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := EvalConfig(f, raw); err == nil || err.Error() != tc.wantErr {
			t.Errorf("%s: got (%v, %v), want error %q", tc.json, got, err, tc.wantErr)
		}
	}
	ok, err := Parse("ok.arch", []byte(`arch c {
  config {
    alibi: bool = false
    require !alibi, "alibi is true"
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := EvalConfig(ok, map[string]any{})
	if err != nil || len(got) != 1 || got["alibi"] != false {
		t.Errorf("got (%v, %v), want map[alibi:false] (a requirement binds no field)", got, err)
	}
}

func TestEvalConfigCoercion(t *testing.T) {
	const src = `arch c {
  config {
    i:   int
    f:   float
    d:   int   = 8 / 2
    g:   float = 2
    opt: int   = none
    s:   string = "x"
    l:   list  = none
  }
}`
	f, err := Parse("c.arch", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		json    string
		want    map[string]any
		wantErr string
	}{
		{
			name: "int to float, integral float to int, defaults coerced",
			json: `{"i": 4.0, "f": 3}`,
			want: map[string]any{"i": int64(4), "f": 3.0, "d": int64(4), "g": 2.0, "opt": nil, "s": "x", "l": nil},
		},
		{
			name: "exponent form integral float to int",
			json: `{"i": 1e3, "f": 1e-5, "opt": 5, "l": [1, 2.5, "a"]}`,
			want: map[string]any{"i": int64(1000), "f": 1e-5, "d": int64(4), "g": 2.0, "opt": int64(5), "s": "x", "l": []any{int64(1), 2.5, "a"}},
		},
		{
			name: "null takes the default",
			json: `{"i": 1, "f": 1.5, "d": null, "s": null}`,
			want: map[string]any{"i": int64(1), "f": 1.5, "d": int64(4), "g": 2.0, "opt": nil, "s": "x", "l": nil},
		},
		{name: "fractional float for int", json: `{"i": 4.5, "f": 1}`, wantErr: `c.arch:3:5: config.json field "i": want int, got float 4.5`},
		{name: "string for float", json: `{"i": 4, "f": "1.0"}`, wantErr: `config.json field "f": want float, got string "1.0"`},
		{name: "bool for int", json: `{"i": true, "f": 1}`, wantErr: `config.json field "i": want int, got bool true`},
		{name: "dict for string", json: `{"i": 1, "f": 1, "s": {"a": 1}}`, wantErr: `config.json field "s": want string, got dict {a: 1}`},
		{name: "infinite float", json: `{"i": 1, "f": Infinity}`, wantErr: `c.arch:4:5: config.json field "f" is +Inf: a number field must be finite`},
		{name: "infinite float, transformers 5's form", json: `{"i": 1, "f": {"__float__": "-Infinity"}}`, wantErr: `config.json field "f" is -Inf: a number field must be finite`},
		{name: "infinite int", json: `{"i": Infinity, "f": 1}`, wantErr: `config.json field "i": want int, got float +Inf`},
		{
			name: "an infinite list entry is kept (time_step_limit's (0.0, inf))",
			json: `{"i": 1, "f": 1, "l": [0.0, Infinity]}`,
			want: map[string]any{"i": int64(1), "f": 1.0, "d": int64(4), "g": 2.0, "opt": nil, "s": "x", "l": []any{0.0, math.Inf(1)}},
		},
		{name: "missing required", json: `{"f": 1}`, wantErr: `c.arch:3:5: config.json lacks required field "i"`},
		{name: "null required", json: `{"i": null, "f": 1}`, wantErr: `config.json lacks required field "i"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := DecodeConfig([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			got, err := EvalConfig(f, raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got (%v, %v), want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeConfig(t *testing.T) {
	got, err := DecodeConfig([]byte(`{"a": 1, "b": 1.5, "c": 2.0, "d": {"e": [3, null]}, "big": 12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": int64(1), "b": 1.5, "c": 2.0, "d": map[string]any{"e": []any{int64(3), nil}}, "big": 12345678901234567890.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Python's json writes float("inf") as Infinity (Mamba2's time_step_limit).
	// transformers 5 writes {"__float__": "Infinity"} instead.
	inf, err := DecodeConfig([]byte(`{"time_step_limit": [0.0, Infinity], "lo": -Infinity, "s": "Infinity \" x", "t": [0.0, {"__float__": "Infinity"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if l := inf["time_step_limit"].([]any); !math.IsInf(l[1].(float64), 1) || !math.IsInf(inf["lo"].(float64), -1) || inf["s"] != `Infinity " x` || !math.IsInf(inf["t"].([]any)[1].(float64), 1) {
		t.Errorf("Infinity: got %v", inf)
	}
	for _, bad := range []string{`[1, 2]`, `{"a": `, `null`, ``} {
		if m, err := DecodeConfig([]byte(bad)); err == nil {
			t.Errorf("DecodeConfig(%q) = %v, want an error", bad, m)
		}
	}
}
