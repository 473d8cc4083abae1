package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/testmodels"
)

// TestPromptAddsModelSpecials: a plain --prompt gets the special tokens the
// model adds by default. The Llama 3 vocabulary has no
// tokenizer.ggml.add_bos_token; llama.cpp (and transformers, from its
// tokenizer.json) add BOS: [128000, 9906, 1917] for "Hello world"
// (rt/tokenizer/testdata/vocab/special.json, from llama.cpp).
func TestPromptAddsModelSpecials(t *testing.T) {
	for _, c := range []struct {
		vocab string
		want  []int32
	}{
		{"ggml-vocab-llama-bpe.gguf", []int32{128000, 9906, 1917}},
		{"ggml-vocab-llama-spm.gguf", []int32{1, 15043, 3186}},
		{"ggml-vocab-qwen2.gguf", []int32{9707, 1879}},
	} {
		cmd := generateCmd{Model: testmodels.Vocab(t, c.vocab), Prompt: "Hello world"}
		got, text, err := cmd.promptTokens()
		if err != nil {
			t.Fatalf("%s: %v", c.vocab, err)
		}
		if text == nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: --prompt %q gives %v, want %v", c.vocab, cmd.Prompt, got, c.want)
		}
	}
}

// TestTokenizeKeepsRawDefault: `infer tokenize` adds no special tokens
// unless --add-special.
func TestTokenizeKeepsRawDefault(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	vocab := testmodels.Vocab(t, "ggml-vocab-llama-bpe.gguf")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "[9906,1917]"},
		{[]string{"--add-special"}, "[128000,9906,1917]"},
	} {
		r := clitest.Run(t, bin, append([]string{"tokenize", "--model", vocab, "--text", "Hello world", "--json"}, c.args...)...)
		if r.Code != 0 {
			t.Fatalf("tokenize %v: %q", c.args, r.Stderr)
		}
		var out struct{ IDs []int32 }
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("stdout %q: %v", r.Stdout, err)
		}
		if got, _ := json.Marshal(out.IDs); string(got) != c.want {
			t.Errorf("tokenize %v: %s, want %s", c.args, got, c.want)
		}
	}
}

func TestParseIDs(t *testing.T) {
	for _, c := range []struct {
		in         string
		allowEmpty bool
		want       []int32
		err        string
	}{
		{"1,2,3", false, []int32{1, 2, 3}, ""},
		{" 1, 2 ", false, []int32{1, 2}, ""},
		{"1,,2", false, nil, "entry 2 of the 3 between commas is empty"},
		{"1,2,", false, nil, "entry 3 of the 3 between commas is empty"},
		{",1", false, nil, "entry 1 of the 2 between commas is empty"},
		{"", false, nil, "no token ids"},
		{" ", true, nil, ""},
		{"1,-2", false, nil, `"-2" is not a token id`},
		{"1,x", false, nil, `"x" is not a token id`},
		{"99999999999", false, nil, "is not a token id"},
	} {
		got, err := parseIDs(c.in, "--prompt-ids", c.allowEmpty)
		if c.err == "" && (err != nil || !slices.Equal(got, c.want)) {
			t.Errorf("parseIDs(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--prompt-ids")) {
			t.Errorf("parseIDs(%q): error %v, want one naming --prompt-ids and %q", c.in, err, c.err)
		}
	}
}

// TestGenerateEmptyPromptID: an empty id in --prompt-ids is a clear error
// before any model is loaded.
func TestGenerateEmptyPromptID(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	r := clitest.Run(t, bin, "generate", "--model", fixture, "--prompt-ids", "1,,2")
	if r.Code == 0 || !strings.Contains(r.Stderr, "--prompt-ids") || !strings.Contains(r.Stderr, "empty") || strings.Contains(r.Stderr, "panic") {
		t.Fatalf("code %d, stderr %q; want a non-zero exit naming the empty id", r.Code, r.Stderr)
	}
}
