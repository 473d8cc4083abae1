package main

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/testmodels"
)

// TestMissingGPURefusedFirst: on a machine without the GPU a --device
// names, generate refuses with what was looked for before compiling
// anything (the compile cache stays empty; the compile for a GPU took two
// minutes before it was checked). A machine with that GPU skips the case.
func TestMissingGPURefusedFirst(t *testing.T) {
	testmodels.NeedIREE(t)
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	for _, device := range []string{"cuda", "vulkan"} {
		t.Run(device, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("XDG_CACHE_HOME", cache)
			r := clitest.Run(t, bin, "generate", "--model", fixture, "--prompt-ids", "1", "--device", device)
			if !strings.Contains(r.Stderr, "is not available on this machine: looked for") {
				t.Skipf("this machine may have a %s device (exit %d): %s", device, r.Code, r.Stderr)
			}
			if r.Code == 0 || strings.Contains(r.Stderr, "panic") {
				t.Errorf("exit %d, stderr %q; want a refusal", r.Code, r.Stderr)
			}
			filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(path, ".vmfb") {
					t.Errorf("%s was compiled before the missing device was refused", path)
				}
				return nil
			})
		})
	}
}

// TestServeShapes: --max-batch 0 picks the device's default (4 on a CPU,
// 64 on a GPU, with the GPU ladder 1, 4, 16, 64), --decode-batches
// replaces the ladder and sets the slots when --max-batch is 0, and a
// batch beyond --max-batch is refused.
func TestServeShapes(t *testing.T) {
	for _, tc := range []struct {
		max     int
		batches []int64
		gpu     bool
		slots   int
		want    []int64
		err     string
	}{
		{0, nil, false, 4, []int64{1, 2, 4}, ""},
		{0, nil, true, 64, []int64{1, 4, 16, 64}, ""},
		{8, nil, true, 8, []int64{1, 4, 8}, ""},
		{6, nil, false, 6, []int64{1, 2, 4, 6}, ""},
		{0, []int64{64, 1, 8, 8}, true, 64, []int64{1, 8, 64}, ""},
		{4, []int64{1, 8}, false, 0, nil, "batch 8 exceeds --max-batch 4"},
		{65, nil, true, 0, nil, "--max-batch 65: give 1 to 64"},
		{-1, nil, false, 0, nil, "--max-batch -1: give 1 to 64"},
		{0, []int64{0, 2}, false, 0, nil, "each size must be at least 1"},
		{0, []int64{1, 2, 128}, false, 0, nil, "--decode-batches [1 2 128]: batch 128 is past the 64 slots"},
	} {
		c := serveCmd{MaxBatch: tc.max, DecodeBatches: tc.batches}
		slots, got, err := c.shapes(tc.gpu)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: %v, want %q", tc, err, tc.err)
			}
			continue
		}
		if err != nil || slots != tc.slots || !slices.Equal(got, tc.want) {
			t.Errorf("--max-batch %d --decode-batches %v (GPU %v): %d slots, batches %v, %v; want %d, %v", tc.max, tc.batches, tc.gpu, slots, got, err, tc.slots, tc.want)
		}
	}
}

// TestCheckDevice: a GPU device refuses a thread count, a CPU kernel
// variant and the int8 precision; the CPU devices keep their rules, and
// refuse int8 without kernels or with a variant that has no int8 build.
func TestCheckDevice(t *testing.T) {
	for _, tc := range []struct {
		device  string
		threads int
		kernels string
		prec    string
		err     string
	}{
		{"cuda", 0, "auto", "f32", ""},
		{"vulkan", 0, "none", "f32", ""},
		{"cuda", 2, "auto", "f32", "--threads 2: a thread count is for the local-task device, not cuda"},
		{"hip", 0, "avx2", "f32", "--kernels avx2: archc's matmul kernels are CPU code; on --device hip"},
		{"cuda", 0, "auto", "int8", "--precision int8: the int8 mode is archc's CPU kernels; on --device cuda"},
		{"local-sync", 2, "auto", "f32", "local-sync device runs on the calling thread only"},
		{"local-task", 0, "sse9", "f32", "kernels"},
		{"local-task", 0, "none", "int8", "--precision int8 needs archc's kernels"},
		{"local-task", 0, "avx2", "int8", "avx2"},
	} {
		err := checkDevice(tc.device, tc.threads, tc.kernels, tc.prec)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}
