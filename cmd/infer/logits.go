package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/archc/archc/internal/launch"
)

// logitsCmd is `infer logits`: the next-token logits at every position of
// a given token sequence (teacher forcing), for comparing archc's numerics
// with another engine's (scripts/agreement.py: top-1 agreement and KL
// divergence against transformers fp32 and llama.cpp).
type logitsCmd struct {
	Model     string `required:"" help:"Model: a Hugging Face folder or a .gguf file." type:"path"`
	PromptIDs string `required:"" name:"prompt-ids" help:"Token ids, comma-separated (e.g. 1,2,3)."`
	Prefix    int    `default:"1" help:"Tokens run as one prefill before the rest are decoded one at a time (at least 1): rows cover positions prefix-1 .. n-1."`
	Out       string `required:"" help:"Write the logits here as a NumPy .npy array, [n - prefix + 1, vocab] float32: row i is the distribution after token prefix-1+i."`
	MaxLen    int64  `help:"KV-cache length in tokens; 0: the sequence's length."`
	Arch      string `help:"Match the model against the families in this .arch file instead of the built-in ones." type:"existingfile"`
	Threads   int    `default:"0" help:"Worker threads of the local-task device (0: one per core)."`
	Kernels   string `default:"auto" help:"archc's matmul kernels: auto, amx, avx512, avx2 or none."`
	Precision string `default:"f32" enum:"f32,int8" help:"Arithmetic of archc's matmul kernels: f32 (exact) or int8 (activations quantized per block)."`
	Quiet     bool   `short:"q" help:"No progress output on stderr."`
}

// Run prefills the first --prefix tokens, decodes the rest one by one (the
// decode entry point generation uses) and writes every step's logits.
func (c *logitsCmd) Run(ctx context.Context) error {
	ids, err := parseIDs(c.PromptIDs, "--prompt-ids", false)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("--prompt-ids: give at least one token id")
	}
	if c.Prefix < 1 || c.Prefix > len(ids) {
		return fmt.Errorf("--prefix %d: give 1 to %d (the number of ids)", c.Prefix, len(ids))
	}
	if c.MaxLen < 0 || c.MaxLen > 0 && c.MaxLen < int64(len(ids)) {
		return fmt.Errorf("--max-len %d: give a length in tokens of at least the %d ids, or 0 for the sequence's length", c.MaxLen, len(ids))
	}
	if c.Threads < 0 {
		return fmt.Errorf("--threads %d: give a positive count, or 0 for one per core", c.Threads)
	}
	if err := checkDevice("local-task", c.Threads, c.Kernels, c.Precision); err != nil {
		return err
	}
	if _, err := os.Stat(c.Model); err != nil {
		return fmt.Errorf("--model: %v", err)
	}
	if st, err := os.Stat(filepath.Dir(c.Out)); err != nil || !st.IsDir() {
		return fmt.Errorf("--out %s: its folder does not exist", c.Out)
	}
	opts := launch.Options{Threads: c.Threads, Kernels: c.Kernels, Precision: c.Precision, Phase: phaseReporter(os.Stderr, c.Quiet)}
	opts.Plan.Arch = c.Arch
	opts.Plan.Lower.MaxLen = c.MaxLen
	if c.MaxLen == 0 {
		opts.Plan.Lower.MaxLen = int64(len(ids))
	}
	opts.Plan.Lower.Slots, opts.Plan.Lower.DecodeBatches = 1, []int64{1}
	m, err := launch.Open(ctx, c.Model, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	if !c.Quiet {
		reportDevice(m.Program, "local-task")
	}
	first, err := m.Prefill(ctx, ids[:c.Prefix], 0)
	if err != nil {
		return err
	}
	rows := [][]float32{first}
	for pos := c.Prefix; pos < len(ids); pos++ {
		l, err := m.Decode(ctx, ids[pos], pos)
		if err != nil {
			return fmt.Errorf("decode at position %d: %w", pos, err)
		}
		rows = append(rows, l)
	}
	// Created only now, so a failed run leaves no empty file behind.
	out, err := os.Create(c.Out)
	if err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	defer out.Close()
	if err := writeNPY(out, rows); err != nil {
		return fmt.Errorf("--out %s: %v", c.Out, err)
	}
	return out.Close()
}

// writeNPY writes rows (all of one length) as a NumPy format 1.0 array of
// little-endian float32, shape [len(rows), len(rows[0])]. (The Go npy
// packages write nested slices as one dimension, or as float64 only.)
func writeNPY(w io.Writer, rows [][]float32) error {
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", len(rows), len(rows[0]))
	// magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes.
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	bw := bufio.NewWriter(w)
	bw.WriteString("\x93NUMPY\x01\x00")
	binary.Write(bw, binary.LittleEndian, uint16(len(header)))
	bw.WriteString(header)
	for _, r := range rows {
		if err := binary.Write(bw, binary.LittleEndian, r); err != nil {
			return err
		}
	}
	return bw.Flush()
}
