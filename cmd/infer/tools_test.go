package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/testmodels"
)

// TestServeTools drives tool calls, structured output and logit_bias with
// the official openai client (testdata/tools_client.py) against SmolLM2:
// required and named tool choices must give schema-valid calls (the
// grammar enforces them), 20 json_schema formats valid output greedily and
// sampled, and bad fields 400s naming them; then an OpenAI Agents SDK
// agent (testdata/agents_client.py) runs its tool loop to a final answer,
// over chat completions and over the Responses API, and LangChain's
// ChatOpenAI (testdata/langchain_client.py) runs a tool loop, streams a
// call, gets structured output and calls a tool over the Responses API.
func TestServeTools(t *testing.T) {
	venv, err := ireetool.FindVenv()
	if err != nil {
		testmodels.NeedIREE(t)
	}
	py := filepath.Join(venv, "bin", "python")
	for _, mod := range []string{"openai", "jsonschema", "llguidance", "agents"} {
		if err := exec.Command(py, "-c", "import "+mod).Run(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed in %s: scripts/setup.sh and scripts/test.sh install requirements.txt and scripts/requirements-test.txt", mod, venv)
			}
			t.Skipf("%s is not installed in %s", mod, venv)
		}
	}
	// The same shape as TestServeOpenAIClient, so the compile is shared.
	srv := startServe(t, testmodels.GGUF(t, "smollm2"), "--api-key", "test-key", "--max-batch", "4", "--queue", "64", "--max-len", "1024")
	out, err := exec.Command(py, "testdata/tools_client.py", srv.url, "test-key").CombinedOutput()
	if err != nil {
		t.Fatalf("tools client checks failed: %v\n%s", err, out)
	}
	t.Logf("tools client: %s", strings.TrimSpace(string(out)))
	out, err = exec.Command(py, "testdata/agents_client.py", srv.url, "test-key").CombinedOutput()
	if err != nil {
		t.Fatalf("agent loop failed: %v\n%s", err, out)
	}
	t.Logf("agents client: %s", strings.TrimSpace(string(out)))
	if err := exec.Command(py, "-c", "import langchain_openai").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("langchain_openai is not installed in %s: scripts/test.sh installs scripts/requirements-test.txt", venv)
		}
		t.Skipf("langchain_openai is not installed in %s", venv)
	}
	out, err = exec.Command(py, "testdata/langchain_client.py", srv.url, "test-key").CombinedOutput()
	if err != nil {
		t.Fatalf("langchain checks failed: %v\n%s", err, out)
	}
	t.Logf("langchain client: %s", strings.TrimSpace(string(out)))
}

// TestServeStructuredGemma runs the structured-output checks
// (testdata/structured_client.py: 20 json_schema formats greedy and
// sampled, chat.completions.parse) against Gemma-3-270M,
// whose 262144-token vocabulary is the other end of the grammar mask's
// cost from SmolLM2's, and whose GGUF gets the built-in Gemma template.
func TestServeStructuredGemma(t *testing.T) {
	venv, err := ireetool.FindVenv()
	if err != nil {
		testmodels.NeedIREE(t)
	}
	py := filepath.Join(venv, "bin", "python")
	for _, mod := range []string{"openai", "jsonschema", "llguidance"} {
		if err := exec.Command(py, "-c", "import "+mod).Run(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed in %s: scripts/setup.sh and scripts/test.sh install requirements.txt and scripts/requirements-test.txt", mod, venv)
			}
			t.Skipf("%s is not installed in %s", mod, venv)
		}
	}
	// One 16-token prefill chunk: golden's real-checkpoint test compiles
	// this shape (the same module, compiled once; prefill_64 too would
	// double the module: 2.9 MB of MLIR against 2.0, 78 s against 25 cold).
	srv := startServe(t, testmodels.GGUF(t, "gemma3"), "--api-key", "test-key", "--max-batch", "1", "--max-len", "512", "--prefill-buckets", "16")
	// json_object (no schema) is left to SmolLM2's run: asked for a person
	// as JSON, Gemma-3-270M keeps inventing keys ("birth_date_of_birth", ...)
	// past any max_tokens, valid JSON all along but never closed.
	out, err := exec.Command(py, "testdata/structured_client.py", srv.url, "test-key", "--skip", "json_object").CombinedOutput()
	if err != nil {
		t.Fatalf("structured output checks on Gemma-3 failed: %v\n%s", err, out)
	}
	t.Logf("structured client (gemma3): %s", strings.TrimSpace(string(out)))
}
