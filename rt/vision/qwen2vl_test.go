package vision

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The expected values come from testdata/gen_qwen2vl.py: transformers
// 5.24's Qwen2VLImageProcessorPil, Qwen2VLProcessor, get_vision_position_ids
// and Qwen2VLModel.get_rope_index (checked there equal to Qwen2.5-VL's and
// Qwen3-VL's).

type qwenExpected struct {
	Transformers string
	Configs      map[string]struct {
		Kwargs            json.RawMessage
		MinPixels         int       `json:"min_pixels"`
		MaxPixels         int       `json:"max_pixels"`
		PatchSize         int       `json:"patch_size"`
		TemporalPatchSize int       `json:"temporal_patch_size"`
		MergeSize         int       `json:"merge_size"`
		Resample          Filter    `json:"resample"`
		ImageMean         []float64 `json:"image_mean"`
		ImageStd          []float64 `json:"image_std"`
		RescaleFactor     float64   `json:"rescale_factor"`
		DoRescale         bool      `json:"do_rescale"`
		DoNormalize       bool      `json:"do_normalize"`
	}
	Cases []struct {
		Config    string
		W, H      int
		Seed      int
		GridTHW   [3]int `json:"grid_thw"`
		Resized   [2]int
		Shape     [2]int
		F32SHA256 string `json:"f32_sha256"`
		U8SHA256  string `json:"u8_sha256"`
		U8        span
	}
	AspectError struct {
		H, W    int
		Message string
	} `json:"aspect_error"`
	AspectOK struct {
		H, W    int
		Resized [2]int
	} `json:"aspect_ok"`
	VisionPos []struct {
		GridTHW [3]int `json:"grid_thw"`
		Merge   int
		Pos     []int32
	} `json:"vision_pos"`
	TokenIDs map[string]int32 `json:"token_ids"`
	Prompts  []struct {
		Label       string
		Text        string
		Images      [][3]int
		Expanded    string
		InputIDs    []int32    `json:"input_ids"`
		GridTHW     [][3]int   `json:"image_grid_thw"`
		PositionIDs [3][]int32 `json:"position_ids"`
		RopeDelta   int64      `json:"rope_delta"`
	}
	Loaded map[string]struct {
		MinPixels         int       `json:"min_pixels"`
		MaxPixels         int       `json:"max_pixels"`
		PatchSize         int       `json:"patch_size"`
		TemporalPatchSize int       `json:"temporal_patch_size"`
		MergeSize         int       `json:"merge_size"`
		Resample          Filter    `json:"resample"`
		ImageMean         []float64 `json:"image_mean"`
		ImageStd          []float64 `json:"image_std"`
	}
}

func qwenTestdata(t *testing.T) (*qwenExpected, []byte) {
	t.Helper()
	b, err := os.ReadFile("testdata/qwen2vl/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var e qwenExpected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile("testdata/qwen2vl/patches.bin.gz")
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	blob, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return &e, blob
}

// testImage is gen_qwen2vl.py's image(w, h, seed): per channel a gradient
// (x, y, x+y) plus a hashed 0..15 texture, wrapped to a byte.
func testImage(w, h, seed int) *RGB8 {
	m := NewRGB8(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for c := 0; c < 3; c++ {
				hsh := uint32(x)*73856093 ^ uint32(y)*19349663 ^ uint32(c+1)*83492791 ^ uint32(seed)*2654435761
				hsh *= 2246822519
				var grad int
				switch c {
				case 0:
					grad = x * 255 / max(w-1, 1)
				case 1:
					grad = y * 255 / max(h-1, 1)
				default:
					grad = (x + y) * 255 / max(w+h-2, 1)
				}
				m.Pix[(y*w+x)*3+c] = uint8((grad + int(hsh>>28)) & 255)
			}
		}
	}
	return m
}

func f32SHA(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestQwenPreprocess: pixel_values and image_grid_thw of
// Qwen2VLImageProcessorPil for images below min_pixels, above max_pixels,
// wide, tall and odd-sized, under four configurations: the patch rows
// before rescale equal transformers' byte for byte (PIL-exact bicubic and
// bilinear resizes) and the float32 rows bit for bit (SHA-256).
func TestQwenPreprocess(t *testing.T) {
	e, blob := qwenTestdata(t)
	if len(e.Cases) < 10 {
		t.Fatalf("only %d cases", len(e.Cases))
	}
	for _, tc := range e.Cases {
		ec := e.Configs[tc.Config]
		c, err := ParseQwenVLConfig(ec.Kwargs)
		if err != nil {
			t.Fatalf("%s: %v", tc.Config, err)
		}
		got := [...]any{c.MinPixels, c.MaxPixels, c.PatchSize, c.TemporalPatchSize, c.MergeSize, c.Resample, c.ImageMean, c.ImageStd, c.RescaleFactor, c.DoRescale, c.DoNormalize}
		want := [...]any{ec.MinPixels, ec.MaxPixels, ec.PatchSize, ec.TemporalPatchSize, ec.MergeSize, ec.Resample, ec.ImageMean, ec.ImageStd, ec.RescaleFactor, ec.DoRescale, ec.DoNormalize}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: config %v, transformers resolved %v", tc.Config, got, want)
		}
		name := tc.Config + "/" + strings.Join([]string{itoa(tc.W), itoa(tc.H)}, "x")
		img := testImage(tc.W, tc.H, tc.Seed)
		out, err := c.Preprocess(img)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if out.GridTHW != tc.GridTHW || out.Height != tc.Resized[0] || out.Width != tc.Resized[1] {
			t.Errorf("%s: grid %v at %dx%d, want %v at %dx%d", name, out.GridTHW, out.Width, out.Height, tc.GridTHW, tc.Resized[1], tc.Resized[0])
			continue
		}
		if g, err := c.Grid(tc.H, tc.W); err != nil || g != tc.GridTHW {
			t.Errorf("%s: Grid %v %v, want %v", name, g, err, tc.GridTHW)
		}
		if rows := len(out.Patches) / max(out.PatchDim, 1); rows != tc.Shape[0] || out.PatchDim != tc.Shape[1] || rows*out.PatchDim != len(out.Patches) {
			t.Errorf("%s: patches [%d, %d], want %v", name, rows, out.PatchDim, tc.Shape)
			continue
		}
		// The rows before rescale and normalize, against transformers' uint8 rows.
		raw := *c
		raw.DoRescale, raw.DoNormalize = false, false
		ro, err := raw.Preprocess(img)
		if err != nil {
			t.Fatal(err)
		}
		wantU8 := blob[tc.U8[0] : tc.U8[0]+tc.U8[1]]
		if len(ro.Patches) != len(wantU8) {
			t.Fatalf("%s: %d raw values, want %d", name, len(ro.Patches), len(wantU8))
		}
		gotU8 := make([]byte, len(ro.Patches))
		diff, worst := 0, 0.0
		for i, v := range ro.Patches {
			if v != float32(math.Trunc(float64(v))) || v < 0 || v > 255 {
				t.Fatalf("%s: raw value %d is %v, not a byte", name, i, v)
			}
			gotU8[i] = uint8(v)
			if d := math.Abs(float64(v) - float64(wantU8[i])); d > 0 {
				diff++
				worst = max(worst, d)
			}
		}
		if s := sha256.Sum256(wantU8); hex.EncodeToString(s[:]) != tc.U8SHA256 {
			t.Fatalf("%s: the stored uint8 rows do not match their SHA-256", name)
		}
		switch {
		case diff == 0:
			if got := f32SHA(out.Patches); got != tc.F32SHA256 {
				t.Errorf("%s: the uint8 rows are transformers', but pixel_values' SHA-256 is %s, want %s", name, got, tc.F32SHA256)
			}
		case worst <= 1:
			t.Logf("%s: %d of %d values differ by 1/255 from transformers'", name, diff, len(wantU8))
		default:
			t.Errorf("%s: %d of %d values differ from transformers', by up to %v/255", name, diff, len(wantU8), worst)
		}
		// pixel_values from the uint8 rows by numpy's rescale and
		// normalize (which the generator checked reproduce transformers'
		// float32 bit for bit): equal where the rows are, within one
		// step of 1/255 (over std) where they differ by one.
		per := c.TemporalPatchSize * c.PatchSize * c.PatchSize
		bad := 0
		for i, u := range wantU8 {
			ch := (i % out.PatchDim) / per
			v := float32(u)
			if c.DoRescale {
				v = float32(float64(u) * c.RescaleFactor)
			}
			tol := 1.0
			if c.DoRescale {
				tol = c.RescaleFactor
			}
			if c.DoNormalize {
				v = (v - stat3(c.ImageMean, ch)) / stat3(c.ImageStd, ch)
				tol /= float64(stat3(c.ImageStd, ch))
			}
			g := out.Patches[i]
			if gotU8[i] == u && g != v || math.Abs(float64(g-v)) > tol*1.0001 {
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d pixel_values differ from transformers' (beyond what their uint8 rows explain)", name, bad, len(wantU8))
		}
	}
}

// TestQwenPatchPositions: the tower's (h, w) per patch row equals
// get_vision_position_ids for several grids and merge sizes (one of two
// frames).
func TestQwenPatchPositions(t *testing.T) {
	e, _ := qwenTestdata(t)
	for _, vp := range e.VisionPos {
		if got := QwenPatchPositions(vp.GridTHW, vp.Merge); !reflect.DeepEqual(got, vp.Pos) {
			t.Errorf("grid %v merge %d: %v, want %v", vp.GridTHW, vp.Merge, got, vp.Pos)
		}
	}
	if QwenPatchPositions([3]int{1, 3, 4}, 2) != nil {
		t.Errorf("a grid merge does not divide gave positions")
	}
}

// TestQwenPrompts: Qwen2VLProcessor's expanded text and image_grid_thw,
// and get_rope_index's position_ids and rope_deltas, for text only, one
// image, an image first, two images, an image in a later turn and an
// image last; the processor loaded from the folder save_pretrained wrote.
func TestQwenPrompts(t *testing.T) {
	e, _ := qwenTestdata(t)
	p, err := LoadProcessor("testdata/qwen2vl/proc_v5")
	if err != nil {
		t.Fatal(err)
	}
	if p.Qwen == nil || p.Placeholder() != ImagePad {
		t.Fatalf("proc_v5 did not load as a Qwen-VL processor: %+v", p)
	}
	pad, start := e.TokenIDs[ImagePad], e.TokenIDs[VisionStart]
	for _, pr := range e.Prompts {
		var imgs []*RGB8
		for _, im := range pr.Images {
			imgs = append(imgs, testImage(im[0], im[1], im[2]))
		}
		pp, err := p.PreprocessPrompt(pr.Text, imgs)
		if err != nil {
			t.Errorf("%s: %v", pr.Label, err)
			continue
		}
		if pp.Text != pr.Expanded {
			t.Errorf("%s: expanded\n%q\nwant\n%q", pr.Label, pp.Text, pr.Expanded)
		}
		var grids [][3]int
		rows := 0
		for _, g := range pp.Grids {
			grids = append(grids, g.THW)
			rows += g.THW[0] * g.THW[1] * g.THW[2]
		}
		if len(grids) != len(pr.GridTHW) || (len(grids) > 0 && !reflect.DeepEqual(grids, pr.GridTHW)) {
			t.Errorf("%s: grids %v, want %v", pr.Label, grids, pr.GridTHW)
		}
		if len(imgs) > 0 && len(pp.PixelValues) != rows*pp.PatchDim {
			t.Errorf("%s: %d pixel values for %d rows of %d", pr.Label, len(pp.PixelValues), rows, pp.PatchDim)
		}
		pos, delta, err := MRoPEPositions(pr.InputIDs, pr.GridTHW, pad, start, 2)
		if err != nil {
			t.Errorf("%s: %v", pr.Label, err)
			continue
		}
		if !reflect.DeepEqual(pos, pr.PositionIDs) || delta != pr.RopeDelta {
			t.Errorf("%s: positions %v delta %d, want %v delta %d", pr.Label, pos, delta, pr.PositionIDs, pr.RopeDelta)
		}
		// The check of vision starts off: the same positions.
		if pos2, d2, err := MRoPEPositions(pr.InputIDs, pr.GridTHW, pad, -1, 2); err != nil || !reflect.DeepEqual(pos2, pos) || d2 != delta {
			t.Errorf("%s: without the vision start check: %v", pr.Label, err)
		}
	}
}

// TestQwenLoad: both folder layouts (transformers 5.x's processor_config.json,
// the Hub's preprocessor_config.json with processor_class inside) resolve
// as Qwen2VLImageProcessorPil.from_pretrained does.
func TestQwenLoad(t *testing.T) {
	e, _ := qwenTestdata(t)
	for dir, w := range e.Loaded {
		p, err := LoadProcessor(filepath.Join("testdata/qwen2vl", dir))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		c := p.Qwen
		if c == nil {
			t.Fatalf("%s: not a Qwen-VL processor", dir)
		}
		got := [...]any{c.MinPixels, c.MaxPixels, c.PatchSize, c.TemporalPatchSize, c.MergeSize, c.Resample, c.ImageMean, c.ImageStd}
		want := [...]any{w.MinPixels, w.MaxPixels, w.PatchSize, w.TemporalPatchSize, w.MergeSize, w.Resample, w.ImageMean, w.ImageStd}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, transformers loads %v", dir, got, want)
		}
	}
}

// TestQwenAspect: smart_resize refuses an aspect ratio above 200 with
// transformers' message and takes 200.
func TestQwenAspect(t *testing.T) {
	e, _ := qwenTestdata(t)
	_, _, err := SmartResize(e.AspectError.H, e.AspectError.W, 28, 56*56, 28*28*1280)
	if err == nil || !strings.Contains(err.Error(), e.AspectError.Message) {
		t.Errorf("SmartResize(%d, %d): %v, want an error with %q", e.AspectError.H, e.AspectError.W, err, e.AspectError.Message)
	}
	h, w, err := SmartResize(e.AspectOK.H, e.AspectOK.W, 28, 56*56, 28*28*1280)
	if err != nil || [2]int{h, w} != e.AspectOK.Resized {
		t.Errorf("SmartResize(%d, %d) = %d, %d, %v; want %v", e.AspectOK.H, e.AspectOK.W, h, w, err, e.AspectOK.Resized)
	}
	c := DefaultQwenVLConfig()
	if _, err := c.Preprocess(testImage(201, 1, 1)); err == nil || !strings.Contains(err.Error(), "aspect ratio must be smaller than 200") {
		t.Errorf("a 201x1 image: %v", err)
	}
}

// TestQwenBadConfig: a configuration the processor cannot run is an
// error naming the file and the key.
func TestQwenBadConfig(t *testing.T) {
	for _, tc := range []struct{ json, says string }{
		{`{"processor_class": "Qwen2VLProcessor", "image_processor": {"patch_size": 0}}`, "patch_size"},
		{`{"processor_class": "Qwen2VLProcessor", "image_processor": {"merge_size": -2}}`, "merge_size"},
		{`{"processor_class": "Qwen2VLProcessor", "image_processor": {"temporal_patch_size": 0}}`, "temporal_patch_size"},
		{`{"processor_class": "Qwen2_5_VLProcessor", "image_processor": {"min_pixels": 5000, "max_pixels": 4000}}`, "min_pixels (size.shortest_edge) 5000 is above max_pixels"},
		{`{"processor_class": "Qwen2VLProcessor", "image_processor": {"size": {"longest_edge": 4000}}}`, "min_pixels"},
		{`{"processor_class": "Qwen3VLProcessor", "image_processor": {"image_std": [0.5, 0, 0.5]}}`, "image_std"},
		{`{"processor_class": "Qwen2VLProcessor", "image_processor": {"image_processor_type": "Idefics3ImageProcessor"}}`, "Idefics3ImageProcessor"},
		{`{"processor_class": "Qwen2VLProcessor", "image_processor": {"resample": 0}}`, "resample"},
		{`{"processor_class": "Qwen2VLProcessor"}`, "without its image_processor"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "processor_config.json"), []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadProcessor(dir)
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "processor_config.json") {
			t.Errorf("%s: got %v, want an error naming processor_config.json and saying %q", tc.json, err, tc.says)
		}
	}
	// The Hub layout: the error names preprocessor_config.json.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "preprocessor_config.json"), []byte(`{"processor_class": "Qwen2VLProcessor", "patch_size": 0}`), 0o644)
	if _, err := LoadProcessor(dir); err == nil || !strings.Contains(err.Error(), "preprocessor_config.json") || !strings.Contains(err.Error(), "patch_size") {
		t.Errorf("Hub layout with patch_size 0: %v", err)
	}
	// Without do_resize, a size that is not a multiple of patch × merge.
	c := DefaultQwenVLConfig()
	c.DoResize = false
	if _, err := c.Preprocess(testImage(56, 30, 1)); err == nil || !strings.Contains(err.Error(), "do_resize") {
		t.Errorf("no resize, 56x30: %v", err)
	}
	if out, err := c.Preprocess(testImage(56, 28, 1)); err != nil || out.GridTHW != [3]int{1, 2, 4} {
		t.Errorf("no resize, 56x28: %v", err)
	}
}

// TestQwenExpandAndMRoPEErrors: a prompt with a video is refused, the
// placeholder count must match the images, and get_rope_index's inputs
// must agree with each other.
func TestQwenExpandAndMRoPEErrors(t *testing.T) {
	p := &Processor{Qwen: func() *QwenVLConfig { c := DefaultQwenVLConfig(); return &c }()}
	if _, err := p.Expand("<|vision_start|><|video_pad|><|vision_end|>", nil); err == nil || !strings.Contains(err.Error(), "video") {
		t.Errorf("video: %v", err)
	}
	if _, err := p.Expand(VisionStart+ImagePad+VisionEnd, nil); err == nil {
		t.Errorf("one placeholder, no image: no error")
	}
	const pad, vs = 9, 8
	ids := []int32{1, vs, pad, pad, 7, 2}
	for _, tc := range []struct {
		ids   []int32
		grids [][3]int
		vs    int32
		says  string
	}{
		{ids, nil, vs, "no image_grid_thw"},
		{ids, [][3]int{{1, 4, 4}}, vs, "2 image tokens"},
		{ids, [][3]int{{1, 2, 4}, {1, 2, 4}}, vs, "2 image_grid_thw given"},
		{ids, [][3]int{{1, 3, 2}}, vs, "multiples of spatial_merge_size"},
		{[]int32{pad, pad, pad, pad}, [][3]int{{1, 4, 4}}, vs, "without the vision start"},
		{nil, nil, vs, "no tokens"},
	} {
		if _, _, err := MRoPEPositions(tc.ids, tc.grids, pad, tc.vs, 2); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v %v: %v, want %q", tc.ids, tc.grids, err, tc.says)
		}
	}
	if _, _, err := MRoPEPositions(ids, [][3]int{{1, 2, 4}}, pad, vs, 0); err == nil || !strings.Contains(err.Error(), "spatial_merge_size") {
		t.Errorf("merge 0: %v", err)
	}
}
