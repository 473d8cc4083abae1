package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolsGolden is golden/tokenizer/chat_tools.json.bz2 (gen_chat_tools.py).
type toolsGolden struct {
	Conversations map[string]struct {
		Messages []struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
			Name       string `json:"name"`
		} `json:"messages"`
		Tools []json.RawMessage          `json:"tools"`
		Vars  map[string]json.RawMessage `json:"vars"`
	} `json:"conversations"`
	Cases []struct {
		Template     string  `json:"template"`
		Conversation string  `json:"conversation"`
		BOS          string  `json:"bos_token"`
		EOS          string  `json:"eos_token"`
		Output       *string `json:"output"`
		Error        *string `json:"error"`
		// MutableOutput is jinja2's rendering where only transformers'
		// immutable sandbox raises (list.append): what archc renders.
		MutableOutput *string `json:"mutable_output"`
	} `json:"cases"`
}

// TestToolTemplatesMatchTransformers renders tool definitions, assistant
// tool calls, tool results, reasoning history and template variables with
// every template and compares with transformers' renderings.
func TestToolTemplatesMatchTransformers(t *testing.T) {
	matchToolRenders(t, "../../golden/tokenizer/chat_tools.json.bz2", filepath.Join("testdata", "templates"))
}

// TestToolConventionTemplatesMatchTransformers does the same with the real
// templates of the tool-call conventions server/toolcall parses
// (testdata/tool-templates, rendered by its gen.py): each renders `tools`
// (RendersTools) exactly as transformers renders them.
func TestToolConventionTemplatesMatchTransformers(t *testing.T) {
	dir := filepath.Join("testdata", "tool-templates")
	matchToolRenders(t, filepath.Join(dir, "renders.json.bz2"), dir)
	files, err := filepath.Glob(filepath.Join(dir, "*.jinja"))
	if err != nil || len(files) < 10 {
		t.Fatalf("templates: %v, %v", files, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !RendersTools(string(src)) {
			t.Errorf("%s: RendersTools = false, want true", filepath.Base(f))
		}
	}
}

func matchToolRenders(t *testing.T, golden, dir string) {
	t.Helper()
	raw, err := readGolden(golden)
	if err != nil {
		t.Fatal(err)
	}
	var g toolsGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cases {
		t.Run(c.Template+"/"+c.Conversation, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, c.Template))
			if err != nil {
				t.Fatal(err)
			}
			conv := g.Conversations[c.Conversation]
			var msgs []Message
			for _, m := range conv.Messages {
				msg := Message{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID, Name: m.Name}
				for _, tc := range m.ToolCalls {
					msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)})
				}
				msgs = append(msgs, msg)
			}
			vars := map[string]any{}
			for k, v := range conv.Vars {
				vars[k] = v
			}
			got, err := Render(string(src), msgs, Options{AddGenerationPrompt: true, BOS: c.BOS, EOS: c.EOS, Now: fixedNow, Tools: conv.Tools, Vars: vars})
			if c.Error != nil && c.MutableOutput != nil {
				c.Output = c.MutableOutput
			} else if c.Error != nil {
				if err == nil {
					t.Fatalf("rendered, want error %q", *c.Error)
				}
				want := strings.TrimPrefix(*c.Error, "TemplateError: ")
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q, want it to contain %q", err, want)
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
