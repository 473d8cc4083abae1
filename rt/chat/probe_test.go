package chat

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRendersTools(t *testing.T) {
	for _, c := range []struct {
		name, tmpl string
		want       bool
	}{
		{"no tools", "{% for m in messages %}{{ m.content }}{% endfor %}", false},
		{"a comment naming tools", "{# tools are not supported #}{% for m in messages %}{{ m.content }}{% endfor %}", false},
		{"an unknown convention", "{% if tools %}<|tool_declare|>{{ tools | tojson }}{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}", true},
		{"tools only when given", "{% for t in tools or [] %}{{ t.function.name }}{% endfor %}{{ messages[0].content }}", true},
		{"fails with tools", "{% if tools %}{{ raise_exception('no tools') }}{% endif %}{{ messages[0].content }}", true},
	} {
		if got := RendersTools(c.tmpl); got != c.want {
			t.Errorf("%s: RendersTools = %v, want %v", c.name, got, c.want)
		}
	}
	// Real templates (shared/data/chat-templates): transformers passes
	// `tools` to each; Gemma 2's and Phi-3.5's ignore them, and SmolLM3's
	// reads its tools from xml_tools / python_tools instead.
	ignores := map[string]bool{"google-gemma-2-2b-it.jinja": true, "microsoft-Phi-3.5-mini-instruct.jinja": true, "HuggingFaceTB-SmolLM3-3B.jinja": true}
	files, err := filepath.Glob(filepath.Join("testdata", "templates", "*.jinja"))
	if err != nil || len(files) < 12 {
		t.Fatalf("templates: %v, %v", files, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := RendersTools(string(src)), !ignores[filepath.Base(f)]; got != want {
			t.Errorf("%s: RendersTools = %v, want %v", filepath.Base(f), got, want)
		}
	}
}
