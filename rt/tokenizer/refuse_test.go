package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedNamesItself: an unsupported pre-tokenizer, normalizer, model
// or tokenizer model is an error that names it and lists what is supported.
func TestRefusedNamesItself(t *testing.T) {
	md := Metadata{
		"tokenizer.ggml.model":  "gpt2",
		"tokenizer.ggml.pre":    "no-such-pre",
		"tokenizer.ggml.tokens": []string{"a", "b", "ab"},
		"tokenizer.ggml.merges": []string{"a b"},
	}
	_, err := fromMetadata(md)
	if err == nil || !strings.Contains(err.Error(), `"no-such-pre" is not supported`) ||
		!strings.Contains(err.Error(), "llama-bpe") || !strings.Contains(err.Error(), "kimi-k2") {
		t.Errorf("GGUF pre-tokenizer: %v", err)
	}
	md["tokenizer.ggml.model"] = "rwkv"
	if _, err := fromMetadata(md); err == nil || !strings.Contains(err.Error(), `"rwkv" is not supported`) || !strings.Contains(err.Error(), "gemma4") {
		t.Errorf("GGUF model: %v", err)
	}
	for _, c := range []struct{ json, want, lists string }{
		{`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Nope"}}`, `"Nope" is not supported`, "Metaspace"},
		{`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"normalizer":{"type":"Nope2"}}`, `"Nope2" is not supported`, "NFKC"},
		{`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"post_processor":{"type":"Nope3"}}`, `"Nope3" is not supported`, "TemplateProcessing"},
		{`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"a"},"behavior":"Odd"}}`, `"Odd" is not supported`, "Isolated"},
		{`{"model":{"type":"WordPiece","vocab":{"a":0}}}`, `"WordPiece" is not supported`, "BPE"},
		{`{"model":{"type":"BPE","vocab":{"a":0},"merges":[],"dropout":0.1}}`, `dropout 0.1`, "random"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := FromHF(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.lists) || !strings.Contains(err.Error(), "tokenizer.json") {
			t.Errorf("%s: %v", c.json, err)
		}
	}
}
