package weights

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// stFile builds safetensors bytes: header length, header JSON, data.
func stFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

// FuzzOpenFile feeds arbitrary bytes to the safetensors header parser: it
// must return an index or an error, never panic or allocate without bound,
// and every tensor it accepts must lie inside the file.
func FuzzOpenFile(f *testing.F) {
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"F16","shape":[],"data_offsets":[8,10]}}`, make([]byte, 10)))
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[1099511627776],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 8)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}'})
	f.Add([]byte("short"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "model.safetensors")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		infos, err := OpenFile(path)
		if err != nil {
			return
		}
		for name, info := range infos {
			if info.Offset < 0 || info.Length < 0 || info.Offset+info.Length > int64(len(data)) {
				t.Fatalf("tensor %q at [%d, +%d) lies outside the %d-byte file", name, info.Offset, info.Length, len(data))
			}
		}
	})
}
