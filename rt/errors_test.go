package rt

import (
	"context"
	"strings"
	"testing"
)

const fixture = "../golden/testdata/llama-tied"

func TestLoadTextWithoutTokenizer(t *testing.T) {
	_, err := LoadText(fixture)
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Fatalf("got %v, want an error naming the missing tokenizer.json", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

// TestLoadRejectsBadProgram: a Program the runtime cannot call is refused
// by name before any worker starts.
func TestLoadRejectsBadProgram(t *testing.T) {
	for _, c := range []struct {
		p    Program
		want string
	}{
		{Program{}, "no compiled module"},
		{Program{Module: "m.vmfb", Vocab: 10, Slots: 1, MaxLen: 8, DecodeBatches: []int64{1}}, "no prefill buckets"},
		{Program{Module: "m.vmfb", Vocab: 10, Slots: 0, MaxLen: 8, PrefillBuckets: []int64{8}, DecodeBatches: []int64{1}}, "0 KV-cache slots"},
	} {
		if _, err := Load(context.Background(), &c.p, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%+v) = %v, want an error containing %q", c.p, err, c.want)
		}
	}
}

// TestCheckDevice: a module runs only on a device of the target it was
// compiled for, and the error says which.
func TestCheckDevice(t *testing.T) {
	for _, tc := range []struct{ target, device, err string }{
		{"", "", ""}, {"", "local-sync", ""}, {"llvm-cpu", "local-task", ""}, {"cuda", "cuda", ""},
		{"", "cuda", "device cuda runs cuda modules, and this module was compiled for llvm-cpu: compile it for cuda (or run it on local-task or local-sync)"},
		{"cuda", "local-task", "device local-task runs llvm-cpu modules, and this module was compiled for cuda"},
		{"", "tpu", `device "tpu": use one of local-task, local-sync, cuda, hip, vulkan`},
	} {
		err := checkDevice(tc.target, tc.device)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("target %q on device %q: %v; want %q", tc.target, tc.device, err, tc.err)
		}
	}
}
