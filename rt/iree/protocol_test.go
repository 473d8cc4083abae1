package iree

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/formats/tensor"
)

// requestTypes and responseTypes are the Go message type of each op.
var (
	requestTypes = map[string]any{
		"load": loadReq{}, "call": callReq{}, "sample": sampleReq{},
		"seq_start": seqStartReq{}, "seq_end": seqEndReq{}, "device": deviceReq{}, "close": closeReq{},
	}
	responseTypes = map[string]any{
		"hello": helloResp{}, "error": errorResp{}, "load": loadResp{}, "call": resultsResp{}, "sample": resultsResp{},
		"seq_start": okResp{}, "seq_end": okResp{}, "device": okResp{}, "close": okResp{},
	}
)

// TestProtocolMessages checks every Go message type against protocol.json
// (the encoder's requests, the decoder's responses): each op has a type,
// and the type's JSON, both with every field set and as the zero value the
// encoder sends, has exactly the declared fields with the declared types.
func TestProtocolMessages(t *testing.T) {
	p, err := protocol()
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []struct {
		name   string
		decl   map[string]map[string]string
		goType map[string]any
	}{{"requests", p.Requests, requestTypes}, {"responses", p.Responses, responseTypes}} {
		if a, b := sortedKeys(group.decl), sortedKeys(group.goType); !slices.Equal(a, b) {
			t.Errorf("%s: protocol.json declares %v, Go has types for %v", group.name, a, b)
		}
		for _, op := range sortedKeys(group.goType) {
			typ := reflect.TypeOf(group.goType[op])
			for _, v := range []reflect.Value{filled(typ), wireZero(typ)} {
				b, err := json.Marshal(v.Interface())
				if err != nil {
					t.Fatal(err)
				}
				var msg any
				d := json.NewDecoder(bytes.NewReader(b))
				d.UseNumber()
				if err := d.Decode(&msg); err != nil {
					t.Fatal(err)
				}
				if err := p.validate(msg, group.decl[op], ""); err != nil {
					t.Errorf("%s.%s: Go's %s %s: %v", group.name, op, typ, b, err)
				}
			}
		}
	}
}

// filled returns a value of t with every field set (pointers non-nil,
// lists of one element).
func filled(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			v.Field(i).Set(filled(t.Field(i).Type))
		}
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(filled(t.Elem()))
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), filled(t.Elem())))
	case reflect.String:
		v.SetString("f32") // a valid dtype too
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("filled: " + t.String())
	}
	return v
}

// wireZero returns the zero value of t as the encoder sends it: lists
// empty, not nil (nonNil, wireRows), except the nullable call rows.
func wireZero(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	if t.Kind() != reflect.Struct {
		return v
	}
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Type.Kind() == reflect.Slice && !(t == reflect.TypeOf(callReq{}) && f.Name == "Rows"):
			v.Field(i).Set(reflect.MakeSlice(f.Type, 0, 0))
		case f.Type.Kind() == reflect.Struct:
			v.Field(i).Set(wireZero(f.Type))
		}
	}
	return v
}

// TestProtocolFile checks the declaration itself and that every field of
// iree.Sampling is required.
func TestProtocolFile(t *testing.T) {
	p, err := protocol()
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 4 {
		t.Errorf("version %d; this test was written for 4: update it with the protocol", p.Version)
	}
	bad := &protocolDecl{Version: 1, Types: map[string]map[string]string{}, Requests: map[string]map[string]string{"x": {"op": "str", "y": "[thing]"}},
		Responses: map[string]map[string]string{"hello": {}, "error": {}}}
	if err := bad.check(); err == nil || !strings.Contains(err.Error(), `requests.x.y: unknown type "thing"`) {
		t.Errorf("undefined type: %v", err)
	}
	for _, c := range []struct {
		msg, want string
	}{
		{`{"ok": true, "functions": ["a"], "extra": 1}`, `unknown field "extra"`},
		{`{"ok": true}`, `missing field "functions"`},
		{`{"ok": true, "functions": [1]}`, `functions[0]: number 1, want str`},
		{`{"ok": true, "functions": null}`, `functions: null, want [str]`},
	} {
		var v any
		d := json.NewDecoder(strings.NewReader(c.msg))
		d.UseNumber()
		d.Decode(&v)
		if err := p.validate(v, p.Responses["load"], ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.msg, err, c.want)
		}
	}
}

// TestWorkerChecksRequests sends malformed requests to the worker: each is
// refused with an error naming the field, and the worker stays usable.
func TestWorkerChecksRequests(t *testing.T) {
	w, ctx := startWorker(t)
	ok := neutral()
	okJSON, _ := json.Marshal(ok)
	var sampling map[string]any
	json.Unmarshal(okJSON, &sampling)
	without := func(m map[string]any, k string) map[string]any {
		c := map[string]any{}
		for kk, v := range m {
			if kk != k {
				c[kk] = v
			}
		}
		return c
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		c := without(m, k)
		c[k] = v
		return c
	}
	start := func(s map[string]any) map[string]any {
		return map[string]any{"op": "seq_start", "seq": 1, "vocab": 4, "sampling": s, "prompt": []int{}}
	}
	for _, c := range []struct {
		name string
		req  map[string]any
		want string
	}{
		{"unknown op", map[string]any{"op": "smaple"}, `unknown op 'smaple'`},
		{"unknown field", map[string]any{"op": "close", "force": true}, `unknown field 'force'`},
		{"renamed option", start(map[string]any{"op": "x"}), `sampling: unknown field 'op'`},
		{"missing option", start(without(sampling, "dry_base")), `sampling: missing field 'dry_base'`},
		{"null option", start(with(sampling, "top_k", nil)), `sampling.top_k: null, want int`},
		{"wrong type", map[string]any{"op": "seq_end", "seq": "1"}, `seq: string '1', want int`},
		{"float for int", map[string]any{"op": "seq_end", "seq": 1.5}, `seq: number 1.5, want int`},
		{"bad list element", with(start(sampling), "prompt", []any{1, "2"}), `prompt[1]: string '2', want int`},
		{"bad token", with(start(sampling), "prompt", []int{9}), `prompt: token id 9 is outside the vocabulary [0, 4)`},
		{"null row tokens", map[string]any{"op": "sample", "args": []any{}, "rows": []any{map[string]any{"seq": nil, "u": 0, "tokens": nil}}}, `rows[0].tokens: null, want [int]`},
	} {
		_, err := w.request(ctx, c.name, c.req, nil, &okResp{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Still usable; a row of a sequence never started is refused by id.
	got, err := sample1(ctx, w, []float32{0, 1}, ok, nil, nil, 0)
	if err != nil || got.ID != 1 {
		t.Errorf("after the errors: %v, %v", got, err)
	}
	lt, _ := tensor.FromF32([]int64{1, 2}, []float32{0, 1})
	if _, err := w.Sample(ctx, lt, []SampleRow{SeqRow(42, 0, nil)}); err == nil || !strings.Contains(err.Error(), "sequence 42 was not started") {
		t.Errorf("unknown sequence: %v", err)
	}
	// Ended sequences are gone.
	if err := w.EndSeq(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sample(ctx, lt, []SampleRow{SeqRow(0, 0, nil)}); err == nil || !strings.Contains(err.Error(), "sequence 0 was not started") {
		t.Errorf("ended sequence: %v", err)
	}
}

// TestProtocolVersion: a worker of another protocol version is refused at
// Start with an error naming both versions.
func TestProtocolVersion(t *testing.T) {
	needVenv(t)
	v := ProtocolVersion()
	script := strings.Replace(workerPy, fmt.Sprintf("\nPROTOCOL = %d\n", v), "\nPROTOCOL = 99\n", 1)
	if script == workerPy {
		t.Fatalf("worker.py has no line PROTOCOL = %d", v)
	}
	_, err := Start(context.Background(), Options{script: script})
	if err == nil || !strings.Contains(err.Error(), "speaks protocol 99") || !strings.Contains(err.Error(), fmt.Sprintf("this archc speaks protocol %d", v)) {
		t.Errorf("worker of protocol 99: %v", err)
	}
	// Protocol 1's hello had no version.
	py := fakePython(t, `h='{"ok": true, "hello": "archc-iree-worker", "iree": "0", "revision": ""}'; printf '\107\000\000\000%s' "$h"; exec sleep 30`)
	if _, err := Start(context.Background(), Options{Python: py}); err == nil || !strings.Contains(err.Error(), "speaks protocol 1,") {
		t.Errorf("worker of protocol 1: %v", err)
	}
}

// TestResponsesChecked: a response with a field the protocol does not
// declare is a protocol error naming it, and the worker is then broken.
func TestResponsesChecked(t *testing.T) {
	bad := `{"ok": true, "results": [], "extra": 1}`
	f := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(f, append(binary.LittleEndian.AppendUint32(nil, uint32(len(bad))), bad...), 0o644); err != nil {
		t.Fatal(err)
	}
	py := fakePython(t, "cat "+helloFile(t, ProtocolVersion())+"; head -c 4 >/dev/null; cat "+f+"; exec sleep 30")
	w, err := Start(context.Background(), Options{Python: py})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Call(context.Background(), "f", nil); err == nil || !strings.Contains(err.Error(), `response to call: unknown field "extra"`) {
		t.Errorf("bad response: %v", err)
	}
	if _, err := w.Call(context.Background(), "f", nil); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("after a protocol error the worker must stay broken: %v", err)
	}
}

// TestUnencodable: a request JSON cannot carry (a NaN draw) is refused
// before anything is sent, and the worker stays usable.
func TestUnencodable(t *testing.T) {
	w, ctx := startWorker(t)
	lt, _ := tensor.FromF32([]int64{1, 2}, []float32{0, 1})
	if _, err := w.Sample(ctx, lt, []SampleRow{SeqRow(0, math.NaN(), nil)}); err == nil || !strings.Contains(err.Error(), "cannot encode") {
		t.Errorf("NaN draw: %v", err)
	}
	if got, err := w.Sample(ctx, lt, nil); err != nil || got[0].ID != 1 {
		t.Errorf("after it: %v, %v", got, err)
	}
}
