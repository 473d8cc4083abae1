package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/testmodels"
)

// eotModel unpacks testdata/llama3-eot.gguf.gz (gen_eot_model.py, run by
// scripts/test.sh; not committed): a Llama
// 3 vocabulary whose eos (128001) is not its end of turn (128009), with
// weights that make greedy decoding emit <|eot_id|> first.
func eotModel(t *testing.T) string {
	t.Helper()
	f, err := os.Open("testdata/llama3-eot.gguf.gz")
	if err != nil {
		t.Fatalf("%v: it is generated, not committed: run python3 cmd/infer/testdata/gen_eot_model.py (gguf and numpy as pinned in scripts/requirements-test.txt; scripts/test.sh runs it)", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "llama3-eot.gguf")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEndOfTurn: generation stops at the end-of-turn token, which is not
// printed, in `generate` and in the server.
func TestEndOfTurn(t *testing.T) {
	testmodels.NeedIREE(t)
	model := eotModel(t)
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	r := clitest.Run(t, bin, "generate", "--model", model, "--chat", "--prompt", "Hello", "--max-tokens", "8", "--json", "-q")
	if r.Code != 0 {
		t.Fatalf("generate: %s", r.Stderr)
	}
	var out struct {
		Tokens []int32 `json:"tokens"`
		Text   *string `json:"text"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, r.Stdout)
	}
	if len(out.Tokens) != 1 || out.Tokens[0] != 128009 || out.Text == nil || *out.Text != "" {
		t.Errorf("generate --chat: tokens %v text %v, want [128009] and no text", out.Tokens, out.Text)
	}
	r = clitest.Run(t, bin, "generate", "--model", model, "--chat", "--prompt", "Hello", "--max-tokens", "8", "-q")
	if r.Code != 0 || strings.Contains(r.Stdout, "<|eot_id|>") {
		t.Errorf("generate --chat printed %q (exit %d), want no end token", r.Stdout, r.Code)
	}

	srv := startServe(t, model, "--max-batch", "2")
	code, body := postJSON(t, srv.url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8, "temperature": 0}`)
	if code != 200 {
		t.Fatalf("chat: %d %v", code, body)
	}
	c := body["choices"].([]any)[0].(map[string]any)
	content := c["message"].(map[string]any)["content"]
	if c["finish_reason"] != "stop" || content != "" || len(c["token_ids"].([]any)) != 1 {
		t.Errorf("served chat: finish %v content %q ids %v, want stop, no text, one token", c["finish_reason"], content, c["token_ids"])
	}
}
