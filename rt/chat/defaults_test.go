package chat

import "testing"

// TestDefaultGemma: the built-in Gemma template folds the system turn into
// the first user turn, writes the assistant as "model" and ends with the
// generation prompt, as Gemma's own templates do.
func TestDefaultGemma(t *testing.T) {
	tpl, ok := Default("gemma3")
	if !ok {
		t.Fatal("no built-in template for gemma3")
	}
	got, err := Render(tpl, []Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: " Hi "}, {Role: "assistant", Content: "Hello."}, {Role: "user", Content: "Bye"}}, Options{AddGenerationPrompt: true, BOS: "<bos>"})
	if err != nil {
		t.Fatal(err)
	}
	want := "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if _, ok := Default("llama"); ok {
		t.Error("llama has no single turn format: no built-in template")
	}
}
