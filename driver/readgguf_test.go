package driver

import (
	"context"
	"github.com/archc/archc/internal/testmodels"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ggufTwin is the llama-tied fixture's F32 GGUF twin (generated:
// testmodels.GGUFTwin fails the test naming the command when it is missing).
func ggufTwin(t testing.TB) string {
	return testmodels.GGUFTwin(t, "../golden/testdata/llama-tied/model.f32.gguf")
}

// TestReadGGUFArch: a family given with --arch reads a GGUF file through
// its own gguf section when it claims the file's architecture, else
// through the built-in family that does (its config block and match
// clauses then decide, as for a config.json); a GGUF section error points
// into the .arch file that declared it.
func TestReadGGUFArch(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain.arch", "arch plain extends llama {\n  match model_type \"llama\"\n}\n")
	p, err := NewPlan(ggufTwin(t), PlanOptions{Arch: plain})
	if err != nil || p.Family.Name != "plain" || p.GGUF.Family != "llama" {
		t.Fatalf("plain: %v (family %v)", err, p)
	}
	own := write("own.arch", "arch own extends llama {\n  match model_type \"own\"\n  gguf \"llama\" {\n    hidden_size = need(\"{arch}.hidden\")\n  }\n}\n")
	_, err = NewPlan(ggufTwin(t), PlanOptions{Arch: own})
	if err == nil || !strings.HasPrefix(err.Error(), own+`:4:19: `) || !strings.Contains(err.Error(), `has no metadata "llama.hidden"`) {
		t.Errorf("own section: got %v, want the error at own.arch:4:19", err)
	}
	other := write("other.arch", "arch other extends llama {\n  match model_type \"other\"\n  gguf \"other\" {}\n}\n")
	p, err = NewPlan(ggufTwin(t), PlanOptions{Arch: other})
	if err == nil || !strings.Contains(err.Error(), `unsupported model_type "llama"`) {
		t.Errorf("a family that claims another architecture: got %v (family %v)", err, p)
	}
}

// TestGGUFUnread: a GGUF file's tensors that map to Hugging Face tensors the
// graph does not read (here: the last layer of the llama-tied twin, read
// as a model with one layer fewer, as llama.cpp writes a model's
// multi-token-prediction layers as extra blocks) are named in Plan.Unread
// and left out of the packed weights; the plan still runs.
func TestGGUFUnread(t *testing.T) {
	arch := filepath.Join(t.TempDir(), "fewer.arch")
	src := "arch fewer extends llama {\n  match model_type \"llama\"\n  gguf \"llama\" {\n    num_hidden_layers = need(\"{arch}.block_count\") - 1\n  }\n}\n"
	if err := os.WriteFile(arch, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := NewPlan(ggufTwin(t), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Unread) != 0 {
		t.Errorf("the twin read whole: unread %v", full.Unread)
	}
	p, err := NewPlan(ggufTwin(t), PlanOptions{Arch: arch})
	if err != nil {
		t.Fatal(err)
	}
	last := p.Config["num_hidden_layers"].(int64)
	want := 0
	for _, tn := range p.GGUF.Tensors {
		if strings.HasPrefix(tn.Name, "blk."+strconv.FormatInt(last, 10)+".") {
			want++
		}
	}
	if want == 0 || len(p.Unread) != want || !strings.HasPrefix(p.Unread[0], "blk."+strconv.FormatInt(last, 10)+".") {
		t.Errorf("unread %v, want the %d tensors of layer %d", p.Unread, want, last)
	}
	for name := range p.GGUF.Formats() {
		if strings.HasPrefix(name, "model.layers."+strconv.FormatInt(last, 10)+".") {
			t.Errorf("%s is still packed", name)
		}
	}
	if _, err := p.Parameters(context.Background(), t.TempDir(), nil); err != nil {
		t.Errorf("Parameters: %v", err)
	}
}

// TestSplitRowErrors: a file without the tensor a split row reads, or with
// another first dimension, is an error naming that GGUF tensor (the rwkv7
// twin's time_mix_lerp_fused).
func TestSplitRowErrors(t *testing.T) {
	src := testmodels.GGUFTwin(t, "../golden/testdata/rwkv7/model.f32.gguf")
	fused := "blk.0.time_mix_lerp_fused.weight"
	for _, c := range []struct {
		edit func(e *testmodels.GGUFEdit)
		want string
	}{
		{func(e *testmodels.GGUFEdit) { e.Drop(fused) }, `missing tensor "model.layers.0.attn.x_v" (family rwkv7 reads it from slice 3 of the first dimension of tensor "` + fused + `"`},
		{func(e *testmodels.GGUFEdit) {
			for i, x := range e.Tensors {
				if x.Name == fused {
					e.Tensors[i].Dims[3], e.Tensors[i].Data = 5, x.Data[:5*64*4]
				}
			}
		}, `tensor "` + fused + `" has shape [5 1 1 64], but rwkv7.arch:`},
	} {
		path := filepath.Join(t.TempDir(), "bad.gguf")
		testmodels.RewriteGGUF(t, src, path, c.edit)
		if _, err := NewPlan(path, PlanOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
