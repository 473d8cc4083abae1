package rt

import (
	"strings"
	"testing"
)

func TestNewModelDrafterRefuses(t *testing.T) {
	model := func(family string, vocab, slots int64) *Model {
		return &Model{Program: &Program{Family: family, Vocab: vocab, Slots: slots}, Vocab: vocab}
	}
	if _, err := NewModelDrafter(model("gemma3", 262144, 4), model("llama", 49152, 4)); err == nil || !strings.Contains(err.Error(), "262144") || !strings.Contains(err.Error(), "49152") || !strings.Contains(err.Error(), "gemma3") {
		t.Errorf("another vocabulary: got %v, want an error naming both models and sizes", err)
	}
	if _, err := NewModelDrafter(model("llama", 49152, 1), model("llama", 49152, 4)); err == nil || !strings.Contains(err.Error(), "slots") {
		t.Errorf("fewer slots: got %v, want an error", err)
	}
	if _, err := NewModelDrafter(model("llama", 49152, 4), model("llama", 49152, 4)); err != nil {
		t.Errorf("same vocabulary: %v", err)
	}
}
