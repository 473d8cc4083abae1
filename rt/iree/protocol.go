package iree

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/archc/archc/formats/tensor"
)

// protocolJSON declares every message of the worker protocol (see its
// "doc"). Go checks responses against it; the worker, which receives it
// as its first argument, checks requests.
//
//go:embed protocol.json
var protocolJSON []byte

// protocolDecl is the parsed protocol.json.
type protocolDecl struct {
	Version   int                          `json:"version"`
	Types     map[string]map[string]string `json:"types"`
	Requests  map[string]map[string]string `json:"requests"`
	Responses map[string]map[string]string `json:"responses"`
	Doc       []string                     `json:"doc"`
}

// protocol parses protocolJSON once. A malformed file is a build-time bug
// that TestProtocolFile catches; the error is still returned, not a panic.
var protocol = sync.OnceValues(func() (*protocolDecl, error) {
	var p protocolDecl
	d := json.NewDecoder(bytes.NewReader(protocolJSON))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("iree: protocol.json: %v", err)
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("iree: protocol.json: %v", err)
	}
	return &p, nil
})

// ProtocolVersion returns the version of the protocol this package speaks
// (protocol.json's "version"); the worker's hello must report the same.
func ProtocolVersion() int {
	p, err := protocol()
	if err != nil {
		return 0
	}
	return p.Version
}

// check verifies that every type the file names is defined.
func (p *protocolDecl) check() error {
	if p.Version < 1 {
		return fmt.Errorf("version %d: want a positive integer", p.Version)
	}
	for _, group := range []struct {
		name string
		m    map[string]map[string]string
	}{{"types", p.Types}, {"requests", p.Requests}, {"responses", p.Responses}} {
		for _, msg := range sortedKeys(group.m) {
			for _, f := range sortedKeys(group.m[msg]) {
				if err := p.checkType(group.m[msg][f]); err != nil {
					return fmt.Errorf("%s.%s.%s: %v", group.name, msg, f, err)
				}
			}
		}
	}
	for op, fields := range p.Requests {
		if fields["op"] != "str" {
			return fmt.Errorf("requests.%s: every request needs \"op\": \"str\"", op)
		}
	}
	for _, r := range []string{"hello", "error"} {
		if p.Responses[r] == nil {
			return fmt.Errorf("responses: %q is missing", r)
		}
	}
	return nil
}

func (p *protocolDecl) checkType(t string) error {
	t = strings.TrimSuffix(t, "?")
	if inner, ok := strings.CutPrefix(t, "["); ok {
		if !strings.HasSuffix(inner, "]") {
			return fmt.Errorf("type %q: a list is [T]", t)
		}
		return p.checkType(strings.TrimSuffix(inner, "]"))
	}
	switch t {
	case "str", "int", "float", "bool":
		return nil
	}
	if p.Types[t] == nil {
		return fmt.Errorf("unknown type %q", t)
	}
	return nil
}

// validate checks a decoded JSON message (json.Unmarshal into any, with
// UseNumber) against fields. Errors name the field by its path, e.g.
// `rows[1].tokens: null, want [int]`, `unknown field "argmx"`, `missing
// field "u"`.
func (p *protocolDecl) validate(v any, fields map[string]string, where string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: %s, want an object", orTop(where), kind(v))
	}
	for _, k := range sortedKeys(obj) {
		if _, ok := fields[k]; !ok {
			return fmt.Errorf("%sunknown field %q (the protocol has %s)", prefix(where), k, strings.Join(sortedKeys(fields), ", "))
		}
	}
	for _, k := range sortedKeys(fields) {
		x, ok := obj[k]
		if !ok {
			return fmt.Errorf("%smissing field %q", prefix(where), k)
		}
		if err := p.validateValue(x, fields[k], join(where, k)); err != nil {
			return err
		}
	}
	return nil
}

func (p *protocolDecl) validateValue(v any, t, where string) error {
	if base, ok := strings.CutSuffix(t, "?"); ok {
		if v == nil {
			return nil
		}
		t = base
	}
	bad := func() error { return fmt.Errorf("%s: %s, want %s", where, kind(v), t) }
	if inner, ok := strings.CutPrefix(t, "["); ok {
		list, ok := v.([]any)
		if !ok {
			return bad()
		}
		inner = strings.TrimSuffix(inner, "]")
		for i, x := range list {
			if err := p.validateValue(x, inner, fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	switch t {
	case "str":
		if _, ok := v.(string); !ok {
			return bad()
		}
	case "bool":
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case "float":
		if _, ok := v.(json.Number); !ok {
			return bad()
		}
	case "int":
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		if _, err := n.Int64(); err != nil {
			return fmt.Errorf("%s: %s, want int", where, n)
		}
	default:
		return p.validate(v, p.Types[t], where)
	}
	return nil
}

// decodeChecked decodes the JSON message b into dst after checking it
// against fields.
func (p *protocolDecl) decodeChecked(b []byte, fields map[string]string, what string, dst any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if err := p.validate(v, fields, ""); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	return nil
}

func kind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("bool %v", x)
	case json.Number:
		return "number " + x.String()
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func join(where, k string) string {
	if where == "" {
		return k
	}
	return where + "." + k
}

func prefix(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

func orTop(where string) string {
	if where == "" {
		return "message"
	}
	return where
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// The messages, one Go type per protocol.json entry (TestProtocolMessages
// checks each against the file). No field is omitempty: every field is
// always sent.

type helloResp struct {
	OK       bool   `json:"ok"`
	Hello    string `json:"hello"`
	Protocol int    `json:"protocol"`
	IREE     string `json:"iree"`
	Revision string `json:"revision"`
}

type errorResp struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

type loadReq struct {
	Op     string      `json:"op"`
	VMFB   string      `json:"vmfb"`
	Device string      `json:"device"`
	Flags  []string    `json:"flags"`
	Params []paramJSON `json:"params"`
}

type loadResp struct {
	OK        bool     `json:"ok"`
	Functions []string `json:"functions"`
}

type callReq struct {
	Op     string       `json:"op"`
	Fn     string       `json:"fn"`
	Args   []tensorJSON `json:"args"`
	Argmax bool         `json:"argmax"`
	Rows   []SampleRow  `json:"rows"` // nil (null): no token choice, unless Argmax
}

type sampleReq struct {
	Op   string       `json:"op"`
	Args []tensorJSON `json:"args"`
	Rows []SampleRow  `json:"rows"`
}

type seqStartReq struct {
	Op       string   `json:"op"`
	Seq      int      `json:"seq"`
	Vocab    int      `json:"vocab"`
	Sampling Sampling `json:"sampling"`
	Prompt   []int32  `json:"prompt"`
}

type seqEndReq struct {
	Op  string `json:"op"`
	Seq int    `json:"seq"`
}

type closeReq struct {
	Op string `json:"op"`
}

// deviceReq asks whether the machine has Device (Worker.CheckDevice).
type deviceReq struct {
	Op     string `json:"op"`
	Device string `json:"device"`
}

// resultsResp answers call and sample: result descriptors, whose payloads
// follow the header.
type resultsResp struct {
	OK      bool         `json:"ok"`
	Results []tensorJSON `json:"results"`
}

type okResp struct {
	OK bool `json:"ok"`
}

type paramJSON struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

type tensorJSON struct {
	DType  tensor.DType `json:"dtype"`
	Shape  []int64      `json:"shape"`
	NBytes int64        `json:"nbytes"`
}
