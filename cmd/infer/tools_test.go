package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt/ireetool"
)

// TestServeTools drives tool calls, structured output and logit_bias with
// the official openai client (testdata/tools_client.py) against SmolLM2:
// required and named tool choices must give schema-valid calls (the
// grammar enforces them), 20 json_schema formats valid output greedily and
// sampled, and bad fields 400s naming them; then an OpenAI Agents SDK
// agent (testdata/agents_client.py) runs its tool loop to a final answer.
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
}
