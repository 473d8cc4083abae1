// Package ggufbuild writes small GGUF files for tests: a v3 container with
// given metadata and tensors, and a tiny llama (TinyLlama). Tests of the
// container reader (formats/gguf) and of the family mapping (driver/ggufmap)
// share it.
package ggufbuild

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// KV is one metadata entry for Build: Val is uint8, int16, uint32,
// int32, float32, bool, string, uint64, float64, []uint32, []int32,
// []float32, []bool, []string or [][]uint32.
type KV struct {
	Key string
	Val any
}

// Tensor is one tensor for Build: its ggml type T (formats/gguf's Type; a
// type parameter so that this package need not import the reader it
// tests), dims in ggml order, raw data bytes.
type Tensor[T ~uint32] struct {
	Name string
	Type T
	Dims []uint64
	Data []byte
}

// Build encodes a little-endian GGUF v3 file with 32-byte alignment.
func Build[T ~uint32](kvs []KV, ts []Tensor[T]) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	str := func(s string) {
		binary.Write(&b, le, uint64(len(s)))
		b.WriteString(s)
	}
	b.WriteString("GGUF")
	binary.Write(&b, le, uint32(3))
	binary.Write(&b, le, uint64(len(ts)))
	binary.Write(&b, le, uint64(len(kvs)))
	for _, e := range kvs {
		str(e.Key)
		switch v := e.Val.(type) {
		case uint8:
			binary.Write(&b, le, uint32(0))
			binary.Write(&b, le, v)
		case int16:
			binary.Write(&b, le, uint32(3))
			binary.Write(&b, le, v)
		case float64:
			binary.Write(&b, le, uint32(12))
			binary.Write(&b, le, v)
		case []int32:
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint32(5))
			binary.Write(&b, le, uint64(len(v)))
			binary.Write(&b, le, v)
		case []float32:
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint32(6))
			binary.Write(&b, le, uint64(len(v)))
			binary.Write(&b, le, v)
		case [][]uint32:
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint64(len(v)))
			for _, a := range v {
				binary.Write(&b, le, uint32(4))
				binary.Write(&b, le, uint64(len(a)))
				binary.Write(&b, le, a)
			}
		case uint32:
			binary.Write(&b, le, uint32(4))
			binary.Write(&b, le, v)
		case int32:
			binary.Write(&b, le, uint32(5))
			binary.Write(&b, le, v)
		case float32:
			binary.Write(&b, le, uint32(6))
			binary.Write(&b, le, v)
		case bool:
			binary.Write(&b, le, uint32(7))
			binary.Write(&b, le, v)
		case string:
			binary.Write(&b, le, uint32(8))
			str(v)
		case uint64:
			binary.Write(&b, le, uint32(10))
			binary.Write(&b, le, v)
		case []uint32:
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint32(4))
			binary.Write(&b, le, uint64(len(v)))
			binary.Write(&b, le, v)
		case []bool:
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint32(7))
			binary.Write(&b, le, uint64(len(v)))
			binary.Write(&b, le, v)
		case []string:
			binary.Write(&b, le, uint32(9))
			binary.Write(&b, le, uint32(8))
			binary.Write(&b, le, uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		default:
			panic("Build: unsupported value")
		}
	}
	var off uint64
	offs := make([]uint64, len(ts))
	for i, t := range ts {
		offs[i] = off
		off += (uint64(len(t.Data)) + 31) / 32 * 32
	}
	for i, t := range ts {
		str(t.Name)
		binary.Write(&b, le, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			binary.Write(&b, le, d)
		}
		binary.Write(&b, le, uint32(t.Type))
		binary.Write(&b, le, offs[i])
	}
	for b.Len()%32 != 0 {
		b.WriteByte(0)
	}
	for _, t := range ts {
		b.Write(t.Data)
		for b.Len()%32 != 0 {
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

// F32s encodes float32 values little-endian.
func F32s(v ...float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

// Seq returns n float32 values start, start+1, ...
func Seq(start float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = start + float32(i)
	}
	return out
}

// WriteFile writes data to a fresh file in a temp dir and returns its path.
func WriteFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TinyLlama is a 1-layer llama GGUF: hidden 4, 2 heads, 1 KV head,
// head_dim 2, intermediate 8, vocab 3, F32 weights with distinct values.
func TinyLlama[T ~uint32](extra ...KV) ([]KV, []Tensor[T]) {
	f32 := T(0) // GGML_TYPE_F32
	kvs := append([]KV{
		{"general.architecture", "llama"},
		{"general.name", "tiny"},
		{"llama.block_count", uint32(1)},
		{"llama.context_length", uint32(64)},
		{"llama.embedding_length", uint32(4)},
		{"llama.feed_forward_length", uint32(8)},
		{"llama.attention.head_count", uint32(2)},
		{"llama.attention.head_count_kv", uint32(1)},
		{"llama.rope.freq_base", float32(10000)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"llama.rope.dimension_count", uint32(2)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.tokens", []string{"a", "b", "c"}},
	}, extra...)
	ts := []Tensor[T]{
		{"token_embd.weight", f32, []uint64{4, 3}, F32s(Seq(0, 12)...)},
		{"output_norm.weight", f32, []uint64{4}, F32s(Seq(1, 4)...)},
		{"blk.0.attn_norm.weight", f32, []uint64{4}, F32s(Seq(1, 4)...)},
		{"blk.0.attn_q.weight", f32, []uint64{4, 4}, F32s(Seq(0, 16)...)},
		{"blk.0.attn_k.weight", f32, []uint64{4, 2}, F32s(Seq(100, 8)...)},
		{"blk.0.attn_v.weight", f32, []uint64{4, 2}, F32s(Seq(200, 8)...)},
		{"blk.0.attn_output.weight", f32, []uint64{4, 4}, F32s(Seq(300, 16)...)},
		{"blk.0.ffn_norm.weight", f32, []uint64{4}, F32s(Seq(1, 4)...)},
		{"blk.0.ffn_gate.weight", f32, []uint64{4, 8}, F32s(Seq(400, 32)...)},
		{"blk.0.ffn_up.weight", f32, []uint64{4, 8}, F32s(Seq(500, 32)...)},
		{"blk.0.ffn_down.weight", f32, []uint64{8, 4}, F32s(Seq(600, 32)...)},
	}
	return kvs, ts
}
