package rt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/archc/archc/rt/weights"
)

const fixture = "../golden/testdata/llama-tied"

// stTensor is one tensor to write into a test safetensors file.
type stTensor struct {
	dtype string // safetensors dtype name: F32, I8, ...
	shape []int64
	data  []byte
}

// writeSafetensors writes a safetensors file: an 8-byte little-endian
// header length, the JSON header, then the tensor data in name order.
func writeSafetensors(t testing.TB, path string, ts map[string]stTensor) {
	t.Helper()
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	var data []byte
	for _, n := range names {
		x := ts[n]
		header[n] = map[string]any{"dtype": x.dtype, "shape": x.shape, "data_offsets": []int{len(data), len(data) + len(x.data)}}
		data = append(data, x.data...)
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixtureCopy copies the tiny llama fixture into a temp dir, letting edit
// change its tensors (nil edit: unchanged) and its config.
func fixtureCopy(t testing.TB, edit func(map[string]stTensor), editCfg func(map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	infos, err := weights.OpenFile(filepath.Join(fixture, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]stTensor{}
	for name, info := range infos {
		x, err := info.Read()
		if err != nil {
			t.Fatal(err)
		}
		ts[name] = stTensor{dtype: strings.ToUpper(string(x.DType)), shape: x.Shape, data: x.Data}
	}
	if edit != nil {
		edit(ts)
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
	data, err := os.ReadFile(filepath.Join(fixture, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if editCfg != nil {
		editCfg(cfg)
	}
	if data, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPlanErrors(t *testing.T) {
	const norm = "model.layers.1.input_layernorm.weight"
	for _, c := range []struct {
		name    string
		edit    func(map[string]stTensor)
		editCfg func(map[string]any)
		want    []string // substrings of the error
	}{
		{"unknown model_type", nil, func(c map[string]any) { c["model_type"] = "frobnicator" }, []string{`unsupported model_type "frobnicator"`, "llama"}},
		{"no model_type", nil, func(c map[string]any) { delete(c, "model_type") }, []string{"no model_type"}},
		{"mixture of experts", nil, func(c map[string]any) { c["model_type"] = "qwen2_moe" }, []string{`unsupported model_type "qwen2_moe"`}},
		{"missing config field", nil, func(c map[string]any) { delete(c, "hidden_size") }, []string{`lacks required field "hidden_size"`, "llama.arch:"}},
		{"config field of wrong type", nil, func(c map[string]any) { c["num_hidden_layers"] = "two" }, []string{`"num_hidden_layers"`, "want int"}},
		{"missing tensor", func(ts map[string]stTensor) { delete(ts, norm) }, nil, []string{`missing tensor "` + norm + `"`}},
		{"wrong shape", func(ts map[string]stTensor) {
			ts[norm] = stTensor{dtype: "F32", shape: []int64{32}, data: make([]byte, 32*4)}
		}, nil, []string{norm, "shape [32]", "[64]"}},
		{"unsupported dtype", func(ts map[string]stTensor) {
			ts[norm] = stTensor{dtype: "I8", shape: []int64{64}, data: make([]byte, 64)}
		}, nil, []string{norm, "I8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fixtureCopy(t, c.edit, c.editCfg)
			_, err := NewPlan(dir, PlanOptions{})
			if err == nil {
				t.Fatal("NewPlan succeeded on bad input")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestPlanBadArch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.arch")
	src := "arch bad {\n  match model_type \"llama\"\n  x = rms_nrom(tokens)\n  logits = x\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewPlan(fixture, PlanOptions{Arch: path})
	if err == nil || !strings.Contains(err.Error(), path+":3:7: unknown primitive \"rms_nrom\" (did you mean rms_norm?)") {
		t.Fatalf("got %v, want a positioned unknown-primitive error", err)
	}
}

func TestOpenWithoutIREE(t *testing.T) {
	t.Setenv("ARCHC_VENV", filepath.Join(t.TempDir(), "no-such-venv"))
	_, err := Open(context.Background(), fixture, Options{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Fatalf("got %v, want an error telling how to install IREE", err)
	}
}

func TestOpenWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(fixture, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(dir, PlanOptions{})
	if err != nil {
		t.Fatalf("a bare config must still plan (weights declared f32): %v", err)
	}
	if p.Weights != nil || !strings.Contains(string(p.MLIR), "tensor<256x64xf32>") {
		t.Errorf("bare-config plan: weights %v, want none and f32 declarations", p.Weights)
	}
	if _, err := Open(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "no model.safetensors") {
		t.Fatalf("got %v, want a missing-checkpoint error", err)
	}
}

func TestEOSTokens(t *testing.T) {
	for _, c := range []struct {
		raw  map[string]any
		want []int32
	}{
		{map[string]any{"eos_token_id": int64(2)}, []int32{2}},
		{map[string]any{"eos_token_id": []any{int64(2), int64(7)}}, []int32{2, 7}},
		{map[string]any{}, nil},
	} {
		got, err := eosTokens("", c.raw)
		if err != nil || len(got) != len(c.want) || (len(got) > 0 && got[len(got)-1] != c.want[len(c.want)-1]) {
			t.Errorf("eosTokens(%v) = %v, %v; want %v", c.raw, got, err, c.want)
		}
	}
	if _, err := eosTokens("", map[string]any{"eos_token_id": "x"}); err == nil {
		t.Error("a string eos_token_id must be an error")
	}
}

func TestLoadTextWithoutTokenizer(t *testing.T) {
	_, err := LoadText(fixture)
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Fatalf("got %v, want an error naming the missing tokenizer.json", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}
