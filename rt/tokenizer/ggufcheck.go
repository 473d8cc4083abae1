package tokenizer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// checkGGUFHeader walks the metadata section of a GGUF file and checks that
// every count and length it declares fits in the file, so that a corrupt
// file is rejected before the parser allocates or loops on absurd sizes.
func checkGGUFHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	w := &walker{r: bufio.NewReaderSize(f, 1<<16), left: st.Size()}
	magic := w.bytes(4)
	if w.err == nil && string(magic) != "GGUF" {
		return fmt.Errorf("not a GGUF file (magic %q)", magic)
	}
	version := w.u32()
	if w.err == nil && (version < 2 || version > 3) {
		return fmt.Errorf("GGUF version %d is not supported (want 2 or 3)", version)
	}
	tensors := w.u64()
	kvs := w.u64()
	if w.err != nil {
		return w.err
	}
	if kvs > uint64(w.left)/13 || tensors > uint64(w.left)/24 {
		return fmt.Errorf("header declares %d metadata entries and %d tensors, more than the file can hold", kvs, tensors)
	}
	for i := uint64(0); i < kvs && w.err == nil; i++ {
		w.str()
		w.value(w.u32(), 0)
	}
	return w.err
}

// walker reads little-endian GGUF values, never past the file size.
type walker struct {
	r    *bufio.Reader
	left int64
	err  error
}

var errTrunc = fmt.Errorf("metadata runs past the end of the file")

func (w *walker) skip(n uint64) {
	if w.err != nil {
		return
	}
	if n > uint64(w.left) {
		w.err = errTrunc
		return
	}
	if _, err := w.r.Discard(int(n)); err != nil {
		w.err = errTrunc
		return
	}
	w.left -= int64(n)
}

func (w *walker) bytes(n int) []byte {
	if w.err != nil {
		return nil
	}
	if int64(n) > w.left {
		w.err = errTrunc
		return nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(w.r, b); err != nil {
		w.err = errTrunc
		return nil
	}
	w.left -= int64(n)
	return b
}

func (w *walker) u32() uint32 {
	b := w.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (w *walker) u64() uint64 {
	b := w.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (w *walker) str() { w.skip(w.u64()) }

// fixed sizes of GGUF scalar types 0..12 (string 8 and array 9 excluded).
var ggufSize = map[uint32]uint64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

func (w *walker) value(typ uint32, depth int) {
	if w.err != nil {
		return
	}
	switch {
	case typ == 8:
		w.str()
	case typ == 9:
		if depth > 4 {
			w.err = fmt.Errorf("metadata arrays nested too deeply")
			return
		}
		et := w.u32()
		n := w.u64()
		if sz, ok := ggufSize[et]; ok {
			if n > uint64(w.left)/sz {
				w.err = errTrunc
				return
			}
			w.skip(n * sz)
			return
		}
		if et != 8 && et != 9 {
			w.err = fmt.Errorf("metadata array of unknown type %d", et)
			return
		}
		if n > uint64(w.left)/8 {
			w.err = errTrunc
			return
		}
		for j := uint64(0); j < n && w.err == nil; j++ {
			w.value(et, depth+1)
		}
	default:
		sz, ok := ggufSize[typ]
		if !ok {
			w.err = fmt.Errorf("metadata value of unknown type %d", typ)
			return
		}
		w.skip(sz)
	}
}
