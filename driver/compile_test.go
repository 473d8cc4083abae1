package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompileWithoutIREE(t *testing.T) {
	t.Setenv("ARCHC_VENV", filepath.Join(t.TempDir(), "no-such-venv"))
	_, err := Compile(context.Background(), fixture, CompileOptions{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Fatalf("got %v, want an error telling how to install IREE", err)
	}
}

func TestCompileWithoutCheckpoint(t *testing.T) {
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
	if _, err := Compile(context.Background(), dir, CompileOptions{}); err == nil || !strings.Contains(err.Error(), "no model.safetensors") {
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
