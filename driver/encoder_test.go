package driver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEncoderWidthMismatch: an encoder whose projector ends at another
// width than the decoder's hidden size is an error at the .arch line of
// the merge, naming both widths.
func TestEncoderWidthMismatch(t *testing.T) {
	src, err := os.ReadFile("../archs/idefics3.arch")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "text_config.hidden_size)", "text_config.hidden_size + 1)", 1)
	bad = strings.Replace(bad, "arch idefics3 extends llama", "arch idefics3wide extends llama", 1)
	if bad == string(src) {
		t.Fatal("idefics3.arch no longer ends its projector at text_config.hidden_size: update the test")
	}
	path := filepath.Join(t.TempDir(), "wide.arch")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewGraph("../golden/testdata/vision/idefics3", PlanOptions{Arch: path})
	if err == nil || !regexp.MustCompile(`wide\.arch:\d+:\d+: masked_scatter: encoder image's output has width 17 but the decoder's embeddings 16`).MatchString(err.Error()) {
		t.Fatalf("got %v, want an error at the merge's line naming widths 17 and 16", err)
	}
}
