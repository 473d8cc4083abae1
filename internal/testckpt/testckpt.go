// Package testckpt writes small safetensors checkpoints for tests: edited
// copies of the tiny llama fixture, and files of given tensors.
package testckpt

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/internal/testmodels"
)

// STTensor is one tensor to write into a test safetensors file.
type STTensor struct {
	DType string // safetensors dtype name: F32, I8, ...
	Shape []int64
	Data  []byte
}

// WriteSafetensors writes a safetensors file: an 8-byte little-endian
// header length, the JSON header, then the tensor data in name order.
func WriteSafetensors(t testing.TB, path string, ts map[string]STTensor) {
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
		header[n] = map[string]any{"dtype": x.DType, "shape": x.Shape, "data_offsets": []int{len(data), len(data) + len(x.Data)}}
		data = append(data, x.Data...)
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

// FixtureCopy copies the tiny llama fixture (llama-tied) into a temp dir,
// letting edit change its tensors (nil edit: unchanged) and editCfg its
// config.
func FixtureCopy(t testing.TB, edit func(map[string]STTensor), editCfg func(map[string]any)) string {
	t.Helper()
	return FixtureCopyOf(t, "llama-tied", edit, editCfg)
}

// FixtureCopyOf is FixtureCopy of the golden fixture name
// (golden/testdata/NAME) instead of the tiny llama.
func FixtureCopyOf(t testing.TB, name string, edit func(map[string]STTensor), editCfg func(map[string]any)) string {
	t.Helper()
	fixture := testmodels.Fixture(name)
	dir := t.TempDir()
	infos, err := weights.OpenFile(filepath.Join(fixture, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]STTensor{}
	for name, info := range infos {
		x, err := info.Read()
		if err != nil {
			t.Fatal(err)
		}
		ts[name] = STTensor{DType: strings.ToUpper(string(x.DType)), Shape: x.Shape, Data: x.Data}
	}
	if edit != nil {
		edit(ts)
	}
	WriteSafetensors(t, filepath.Join(dir, "model.safetensors"), ts)
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
