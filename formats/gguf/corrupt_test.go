package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustFail opens data and checks the error is one line naming the file
// and containing want.
func mustFail(t *testing.T, data []byte, want string) {
	t.Helper()
	p := writeFile(t, "bad.gguf", data)
	_, err := Open(p)
	if err == nil {
		t.Fatalf("Open succeeded, want an error containing %q", want)
	}
	msg := err.Error()
	if !strings.Contains(msg, p) || strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
		t.Errorf("error %q: want one line naming %s and containing %q", msg, p, want)
	}
}

func TestOpenTruncated(t *testing.T) {
	kvs, ts := tinyLlama()
	full := buildGGUF(kvs, ts)
	p := filepath.Join(t.TempDir(), "t.gguf")
	for n := 0; n < len(full); n++ {
		if n > 1024 && n%13 != 0 && n != len(full)-1 {
			continue // every header prefix, a sample of the data
		}
		if err := os.WriteFile(p, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(p); err == nil {
			t.Fatalf("Open of the first %d of %d bytes succeeded", n, len(full))
		} else if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not name the file", err)
		}
	}
}

func TestOpenCorrupt(t *testing.T) {
	kvs, ts := tinyLlama()
	le := binary.LittleEndian
	t.Run("not gguf", func(t *testing.T) { mustFail(t, []byte("GGML0000000000000000000000"), "magic") })
	t.Run("empty", func(t *testing.T) { mustFail(t, nil, "magic") })
	t.Run("version 1", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		le.PutUint32(b[4:], 1)
		mustFail(t, b, "version 1")
	})
	t.Run("big endian", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		binary.BigEndian.PutUint32(b[4:], 3)
		mustFail(t, b, "big-endian")
	})
	t.Run("huge tensor count", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		le.PutUint64(b[8:], 1<<60)
		mustFail(t, b, "tensors")
	})
	t.Run("huge kv count", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		le.PutUint64(b[16:], 1<<62)
		mustFail(t, b, "metadata entries")
	})
	t.Run("huge key length", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		le.PutUint64(b[24:], 1<<63)
		mustFail(t, b, "does not fit")
	})
	t.Run("split", func(t *testing.T) {
		mustFail(t, buildGGUF(append(kvs[:1:1], kv{"split.tensors.count", uint64(1 << 40)}), nil), "split")
	})
	t.Run("alignment", func(t *testing.T) {
		mustFail(t, buildGGUF(append(kvs[:1:1], kv{"general.alignment", uint32(48)}), nil), "power of two")
		mustFail(t, buildGGUF(append(kvs[:1:1], kv{"general.alignment", float32(32)}), nil), "uint32")
	})
	t.Run("no architecture", func(t *testing.T) {
		mustFail(t, buildGGUF(kvs[1:], ts), "general.architecture")
	})
	t.Run("zero dim", func(t *testing.T) {
		bad := append([]tdesc{}, ts...)
		bad[1] = tdesc{"output_norm.weight", F32, []uint64{0}, nil}
		mustFail(t, buildGGUF(kvs, bad), "dims")
	})
	t.Run("partial block", func(t *testing.T) {
		bad := append([]tdesc{}, ts...)
		bad[1] = tdesc{"output_norm.weight", Q8_0, []uint64{16}, make([]byte, 34)}
		mustFail(t, buildGGUF(kvs, bad), "block")
	})
	t.Run("duplicate", func(t *testing.T) {
		bad := append([]tdesc{}, ts...)
		bad[2].Name = bad[1].Name
		mustFail(t, buildGGUF(kvs, bad), "twice")
	})
	// Patch a tensor info's offset: find the name, skip dims and type.
	patchOffset := func(b []byte, name string, off uint64) {
		i := bytes.Index(b, []byte(name))
		i += len(name)
		nd := int(le.Uint32(b[i:]))
		le.PutUint64(b[i+4+8*nd+4:], off)
	}
	t.Run("offset outside", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		patchOffset(b, "blk.0.ffn_down.weight", 1<<40)
		mustFail(t, b, "truncated")
	})
	t.Run("offset overflow", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		patchOffset(b, "blk.0.ffn_down.weight", ^uint64(0)-8)
		mustFail(t, b, "truncated")
	})
	t.Run("misaligned", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		patchOffset(b, "output_norm.weight", 4)
		mustFail(t, b, "alignment")
	})
	t.Run("overlap", func(t *testing.T) {
		b := buildGGUF(kvs, ts)
		patchOffset(b, "blk.0.attn_q.weight", 0)
		mustFail(t, b, "overlap")
	})
	t.Run("shard name", func(t *testing.T) {
		dir := t.TempDir()
		b := buildGGUF(kvs, ts)
		for _, n := range []string{"m-00001-of-00002.gguf", "m-00002-of-00002.gguf"} {
			os.WriteFile(filepath.Join(dir, n), b, 0o644)
		}
		_, err := Open(filepath.Join(dir, "m-00001-of-00002.gguf"))
		if err == nil || !strings.Contains(err.Error(), "shard") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := Open(filepath.Join(t.TempDir(), "nope.gguf"))
		if err == nil || !strings.Contains(err.Error(), "nope.gguf") {
			t.Errorf("got %v", err)
		}
	})
}

// FuzzOpen feeds corrupt files to Open: it must return an error or a File
// whose tensors all lie inside the file, and never panic or allocate
// without bound. Seeds are in testdata/fuzz/FuzzOpen. (driver/ggufmap's
// FuzzRead goes on to read such files through their family.)
func FuzzOpen(f *testing.F) {
	kvs, ts := tinyLlama()
	f.Add(buildGGUF(kvs, ts))
	f.Add(buildGGUF(kvs[:3], ts[:2]))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.gguf")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := Open(p)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for _, tt := range g.Tensors {
			if tt.Offset < g.DataOffset || tt.Offset+tt.Size > int64(len(data)) {
				t.Fatalf("tensor %s [%d,+%d) outside the %d-byte file", tt.Name, tt.Offset, tt.Size, len(data))
			}
		}
	})
}
