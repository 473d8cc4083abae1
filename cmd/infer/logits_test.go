package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/testmodels"
)

// readNPY parses a 2-D little-endian float32 .npy file as writeNPY writes
// it (numpy.load reads the same bytes: scripts/agreement.py).
func readNPY(t *testing.T, path string) (rows, cols int, data []float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || !bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")) {
		t.Fatalf("%s: not a NumPy 1.0 file", path)
	}
	n := int(binary.LittleEndian.Uint16(b[8:]))
	header := string(b[10 : 10+n])
	if (10+n)%64 != 0 || !strings.HasSuffix(header, "\n") || !strings.Contains(header, "'descr': '<f4'") {
		t.Fatalf("%s: header %q (data offset %d, want a multiple of 64)", path, header, 10+n)
	}
	m := regexp.MustCompile(`'shape': \((\d+), (\d+)\)`).FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("%s: no 2-D shape in %q", path, header)
	}
	rows, _ = strconv.Atoi(m[1])
	cols, _ = strconv.Atoi(m[2])
	body := b[10+n:]
	if len(body) != 4*rows*cols {
		t.Fatalf("%s: %d data bytes for shape (%d, %d)", path, len(body), rows, cols)
	}
	data = make([]float32, rows*cols)
	for i := range data {
		data[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return rows, cols, data
}

// TestLogits: teacher-forced along the oracle's greedy continuation, each
// row's argmax is the next oracle token (the rows are the decode entry
// point's logits, one per position from --prefix-1 on), in a .npy file of
// the right shape; bad flags are refused by name.
func TestLogits(t *testing.T) {
	bin := clitest.Build(t, t.TempDir(), "github.com/archc/archc/cmd/infer")
	out := filepath.Join(t.TempDir(), "l.npy")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"prefix 0", []string{"--prompt-ids", "1,2", "--prefix", "0"}, "--prefix 0: give 1 to 2"},
		{"prefix past the ids", []string{"--prompt-ids", "1,2", "--prefix", "3"}, "--prefix 3: give 1 to 2"},
		{"no ids", []string{"--prompt-ids", " "}, "--prompt-ids: no token ids given"},
		{"int8 without kernels", []string{"--prompt-ids", "1", "--kernels", "none", "--precision", "int8"}, "--precision int8 needs archc's kernels"},
		{"unknown precision", []string{"--prompt-ids", "1", "--precision", "int4"}, "--precision must be one of"},
		{"negative threads", []string{"--prompt-ids", "1", "--threads=-1"}, "--threads -1: give a positive count"},
		{"max-len below the ids", []string{"--prompt-ids", "1,2,3", "--max-len", "1"}, "--max-len 1: give a length in tokens of at least the 3 ids"},
		{"out folder missing", []string{"--prompt-ids", "1", "--out", "/no/such/dir/l.npy"}, "--out /no/such/dir/l.npy: its folder does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clitest.Run(t, bin, append([]string{"logits", "--model", fixture, "--out", out}, c.args...)...)
			if r.Code == 0 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") {
				t.Fatalf("code %d, stderr %q; want a non-zero exit mentioning %q", r.Code, r.Stderr, c.want)
			}
		})
	}
	testmodels.NeedIREE(t)
	// A token outside the vocabulary fails after the model loads, and leaves
	// no --out file behind.
	bad := filepath.Join(t.TempDir(), "bad.npy")
	if r := clitest.Run(t, bin, "logits", "-q", "--model", fixture, "--prompt-ids", "1,999", "--out", bad); r.Code == 0 || !strings.Contains(r.Stderr, "outside the vocabulary") {
		t.Errorf("token 999: code %d, stderr %q", r.Code, r.Stderr)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Errorf("a failed run left %s behind", bad)
	}
	// The prompt and the oracle's first four greedy tokens (TestGenerateJSON).
	prompt, greedy := []int{1, 184, 106, 66, 98, 250, 217}, []int{6, 92, 211, 210}
	var ids []string
	for _, id := range append(append([]int{}, prompt...), greedy...) {
		ids = append(ids, strconv.Itoa(id))
	}
	r := clitest.Run(t, bin, "logits", "-q", "--model", fixture, "--prompt-ids", strings.Join(ids, ","), "--prefix", strconv.Itoa(len(prompt)), "--out", out)
	if r.Code != 0 {
		t.Fatalf("logits: %q", r.Stderr)
	}
	rows, vocab, data := readNPY(t, out)
	if rows != len(greedy)+1 {
		t.Fatalf("%d rows, want %d (positions %d..%d)", rows, len(greedy)+1, len(prompt)-1, len(prompt)+len(greedy)-1)
	}
	for i, want := range greedy {
		row := data[i*vocab : (i+1)*vocab]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if best != want {
			t.Errorf("row %d: argmax %d, want the oracle's token %d", i, best, want)
		}
	}
}
