package vision

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestSweepAgainstPIL compares against a large set written by
// testdata/gen_sweep.py (not committed): random resizes, random JPEG/WebP
// decodes and photo-sized images through the default Idefics3 processor.
// It runs only when VISION_SWEEP_DIR names that folder.
func TestSweepAgainstPIL(t *testing.T) {
	dir := os.Getenv("VISION_SWEEP_DIR")
	if dir == "" {
		t.Skip("VISION_SWEEP_DIR not set (see testdata/gen_sweep.py)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "resize.bin"))
	if err != nil {
		t.Fatal(err)
	}
	per := map[Filter]*stats{}
	for len(b) > 0 {
		var hd [5]int
		for i := range hd {
			hd[i] = int(binary.LittleEndian.Uint32(b[4*i:]))
		}
		b = b[20:]
		w, h, ow, oh, f := hd[0], hd[1], hd[2], hd[3], Filter(hd[4])
		src := &RGB8{W: w, H: h, Pix: b[:w*h*3]}
		b = b[w*h*3:]
		want := b[:ow*oh*3]
		b = b[ow*oh*3:]
		got, err := Resize(src, ow, oh, f)
		if err != nil {
			t.Fatal(err)
		}
		if per[f] == nil {
			per[f] = &stats{}
		}
		var s stats
		s.add(got.Pix, want)
		per[f].add(got.Pix, want)
		if s.maxd > 1 {
			t.Errorf("resize %dx%d -> %dx%d %v: %v", w, h, ow, oh, f, s)
		}
	}
	for _, f := range []Filter{Lanczos, Bilinear, Bicubic, Box, Hamming} {
		t.Logf("resize %-8v: %v", f, *per[f])
	}

	var all stats
	eachLine(t, filepath.Join(dir, "img", "list.txt"), func(line string) {
		var name string
		var w, h int
		fmt.Sscan(line, &name, &w, &h)
		data, _ := os.ReadFile(filepath.Join(dir, "img", name))
		want, _ := os.ReadFile(filepath.Join(dir, "img", name+".rgb"))
		img, err := Decode(data, Limits{})
		if err != nil || img.W != w || img.H != h {
			t.Errorf("%s: %v", name, err)
			return
		}
		var s stats
		s.add(img.Pix, want)
		all.add(img.Pix, want)
		if s.maxd > 1 {
			t.Errorf("%s: %v", name, s)
		}
	})
	t.Logf("decode (JPEG, WebP): %v", all)

	cfg := DefaultIdefics3Config()
	eachLine(t, filepath.Join(dir, "big", "list.txt"), func(line string) {
		var name string
		var rows, cols, tiles int
		fmt.Sscan(line, &name, &rows, &cols, &tiles)
		data, _ := os.ReadFile(filepath.Join(dir, "big", name))
		raw, _ := os.ReadFile(filepath.Join(dir, "big", name+".f32"))
		img, err := Decode(data, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := cfg.Preprocess(img)
		if err != nil {
			t.Fatal(err)
		}
		if out.Rows != rows || out.Cols != cols || out.Tiles != tiles || len(raw) != 4*len(out.PixelValues) {
			t.Errorf("%s: grid %d,%d,%d want %d,%d,%d", name, out.Rows, out.Cols, out.Tiles, rows, cols, tiles)
			return
		}
		exact := 0
		for i, v := range out.PixelValues {
			if math.Float32bits(v) == binary.LittleEndian.Uint32(raw[4*i:]) {
				exact++
			}
		}
		t.Logf("%s %dx%d default config: %d/%d float32 bit-exact", name, img.W, img.H, exact, len(out.PixelValues))
	})
}

func eachLine(t *testing.T, path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fn(sc.Text())
	}
}
