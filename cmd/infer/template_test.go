package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
)

// TestChatTemplate: the Gemma-3 GGUF, which has no chat template, gets the
// built-in Gemma one (its turns tokenize to <start_of_turn> ids); a
// --chat-template file replaces a model's template; a file that does not
// render is an error naming it.
func TestChatTemplate(t *testing.T) {
	gf, err := gguf.Open(testmodels.GGUF(t, "gemma3"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := rt.TextFromGGUF(gf)
	if err != nil {
		t.Fatal(err)
	}
	if text.ChatTemplate != "" {
		t.Fatal("the Gemma-3 file has a chat template now: this test needs one without")
	}
	from, err := setChatTemplate(text, "", gf)
	if err != nil || from != "built-in gemma3" {
		t.Fatalf("setChatTemplate: %q, %v", from, err)
	}
	ids, err := text.EncodeChat([]chat.Message{{Role: "user", Content: "Hi"}})
	if err != nil {
		t.Fatal(err)
	}
	sot, ok := text.Tokenizer.TokenID("<start_of_turn>")
	if !ok || slices.Index(ids, sot) < 0 || ids[0] != text.Tokenizer.BOS() {
		t.Errorf("the built-in template's prompt %v has no BOS first or no <start_of_turn> (%d)", ids, sot)
	}

	dir := t.TempDir()
	good := filepath.Join(dir, "t.jinja")
	os.WriteFile(good, []byte("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}[assistant]"), 0o644)
	if from, err := setChatTemplate(text, good, gf); err != nil || from != good || !strings.HasPrefix(text.ChatTemplate, "{% for m") {
		t.Errorf("--chat-template %s: %q, %v", good, from, err)
	}
	bad := filepath.Join(dir, "bad.jinja")
	os.WriteFile(bad, []byte("{% for m in messages %}"), 0o644)
	if _, err := setChatTemplate(text, bad, gf); err == nil || !strings.Contains(err.Error(), "bad.jinja") {
		t.Errorf("a template that does not render: %v", err)
	}
}
