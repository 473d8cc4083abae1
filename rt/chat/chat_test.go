package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type golden struct {
	Conversations map[string][]Message `json:"conversations"`
	Cases         []struct {
		Template            string `json:"template"`
		Conversation        string `json:"conversation"`
		AddGenerationPrompt bool   `json:"add_generation_prompt"`
		BOS                 string `json:"bos_token"`
		EOS                 string `json:"eos_token"`
		Output              *string `json:"output"`
		Error               *string `json:"error"`
	} `json:"cases"`
}

var fixedNow = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)

func TestTemplatesMatchTransformers(t *testing.T) {
	raw, err := os.ReadFile("../../golden/tokenizer/chat.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	dir := "../../../shared/data/chat-templates"
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
