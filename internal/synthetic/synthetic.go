// Package synthetic writes random-weight checkpoints of a given config for
// benchmarks: the tensors the family's graph reads, f32.
package synthetic

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/internal/testckpt"
)

// Checkpoint writes a random-weight checkpoint of the model cfg
// describes (config.json and model.safetensors, f32) into a temp dir and
// returns the dir. The tensors are the ones the family's graph reads
// (driver.NewGraph on the bare config), each drawn from normal(mean, std)
// by initOf, so a benchmark states only its config. seed picks the
// draw.
func Checkpoint(tb testing.TB, cfg map[string]any, seed uint64) string {
	tb.Helper()
	dir := tb.TempDir()
	raw, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		tb.Fatal(err)
	}
	p, err := driver.NewGraph(filepath.Join(dir, "config.json"), driver.PlanOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ts := map[string]testckpt.STTensor{}
	for _, w := range p.Graph.Weights {
		n := int64(1)
		for _, d := range w.Shape {
			n *= d
		}
		mean, std := initOf(w.Name, w.Shape)
		data := make([]byte, 4*n)
		for i := int64(0); i < n; i++ {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(mean+std*r.NormFloat64())))
		}
		ts[w.Name] = testckpt.STTensor{DType: "F32", Shape: w.Shape, Data: data}
	}
	testckpt.WriteSafetensors(tb, filepath.Join(dir, "model.safetensors"), ts)
	return dir
}

// initOf is the normal(mean, std) a synthetic weight is drawn from,
// by its name: norm weights 1 (an identity norm, for either (1 + w) or w
// scaling a fine size), a recurrent layer's A_log around 1, D 1 and
// dt_bias around -2 (Mamba's initialisation ranges), embeddings std 1, and
// every other tensor std 1/√fan_in (its last dimension), so activations
// keep their size through the layers.
func initOf(name string, shape []int64) (mean, std float64) {
	switch base := name[strings.LastIndex(name, ".")+1:]; {
	case strings.HasSuffix(name, "norm.weight") || strings.HasSuffix(name, "norm_f.weight"):
		return 1, 0
	case base == "A_log":
		return 1, 0.5
	case base == "D":
		return 1, 0.1
	case base == "dt_bias":
		return -2, 0.5
	case strings.Contains(name, "embed") && len(shape) == 2:
		return 0, 1
	}
	if len(shape) == 1 {
		return 0, 0.1 // biases
	}
	return 0, 1 / math.Sqrt(float64(shape[len(shape)-1]))
}
