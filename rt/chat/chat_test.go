package chat

import (
	"compress/bzip2"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/archc/archc/internal/testmodels"
)

type golden struct {
	Conversations map[string][]Message `json:"conversations"`
	Cases         []struct {
		Template            string  `json:"template"`
		Conversation        string  `json:"conversation"`
		AddGenerationPrompt bool    `json:"add_generation_prompt"`
		BOS                 string  `json:"bos_token"`
		EOS                 string  `json:"eos_token"`
		Output              *string `json:"output"`
		Error               *string `json:"error"`
	} `json:"cases"`
}

var fixedNow = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

func TestTemplatesMatchTransformers(t *testing.T) {
	raw, err := readGolden("../../golden/tokenizer/chat.json.bz2")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "templates") // copied from ../shared/data/chat-templates; see its README.md
	for _, c := range g.Cases {
		name := c.Template + "/" + c.Conversation
		if c.AddGenerationPrompt {
			name += "/gen"
		}
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, c.Template))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Render(string(src), g.Conversations[c.Conversation], Options{
				AddGenerationPrompt: c.AddGenerationPrompt, BOS: c.BOS, EOS: c.EOS, Now: fixedNow,
			})
			if c.Error != nil {
				if err == nil {
					t.Fatalf("rendered, want error %q", *c.Error)
				}
				if !strings.Contains(err.Error(), *c.Error) {
					t.Fatalf("error %q, want it to contain %q", err, *c.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != *c.Output {
				t.Errorf("output differs\n--- got\n%q\n--- want\n%q", got, *c.Output)
			}
		})
	}
}

func TestSmolLM2GGUFTemplate(t *testing.T) {
	path := testmodels.GGUF(t, "smollm2")
	tpl, err := FromGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Render(tpl, []Message{{Role: "user", Content: "Hi"}}, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestFromHF(t *testing.T) {
	dir := t.TempDir()
	if _, err := FromHF(dir); err == nil {
		t.Error("no template: want an error")
	}
	cfg := `{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := FromHF(dir); err != nil || s != "D" {
		t.Errorf("FromHF = %q, %v", s, err)
	}
}

func TestRaiseException(t *testing.T) {
	_, err := Render(`{{ raise_exception("no system role") }}`, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "no system role") {
		t.Errorf("err = %v", err)
	}
}

// readGolden reads a bzip2-compressed golden file (the rendered-template
// goldens: JSON of near-identical prompts, a tenth of their size
// compressed, kept small for the 64 MiB tracked tree).
func readGolden(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(bzip2.NewReader(f))
}
