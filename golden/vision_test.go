package golden

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/rt/engine"
	"github.com/archc/archc/rt/vision"
)

// The vision tier (DESIGN §7): fixtures under testdata/vision/, written by
// gen_vision_fixtures.py — a tiny random-weight vision-language checkpoint
// with its processor and tokenizer files, test images, and oracle.json:
// per case the processor's input_ids and pixel_values
// (pixel_values.<image>.f32), the connector's output
// (image_features.<case>.f32) and HF fp32 greedy tokens and first-step
// logits with the images.

// visionOracle is a vision fixture's oracle.json.
type visionOracle struct {
	ImageTokenID int32        `json:"image_token_id"`
	MaxNewTokens int          `json:"max_new_tokens"`
	Cases        []visionCase `json:"cases"`
}

// visionCase is one prompt of a vision fixture: its expanded ids, its
// images' pixel_values files (each [1, tiles, 3, H, W] or, one crop an
// image, [1, 3, H, W] f32, in prompt order) and the oracle's outputs.
type visionCase struct {
	Name               string      `json:"name"`
	Messages           []hfMessage `json:"messages"`
	Prompt             string      `json:"prompt"`
	Images             []string    `json:"images"`
	InputIDs           []int32     `json:"input_ids"`
	PixelValuesShape   []int64     `json:"pixel_values_shape"`
	PixelValuesFiles   []string    `json:"pixel_values_files"`
	ImageFeaturesShape []int64     `json:"image_features_shape"`
	Tokens             []int32     `json:"tokens"`
	FirstLogits        []float64   `json:"first_logits"`
	// ImageProcessorKwargs are the image processor options the case's
	// processor call was given (Gemma 3's pan and scan), over the
	// fixture's processor config.
	ImageProcessorKwargs map[string]any `json:"image_processor_kwargs"`
	// Qwen2-VL's: each image's image_grid_thw (its pixel_values file is
	// then patch rows, [t·h·w, C·T·p·p]), and HF get_rope_index's
	// position_ids [3, n] and rope_deltas for the prompt.
	ImageGridTHW [][3]int   `json:"image_grid_thw"`
	PositionIDs  [3][]int32 `json:"position_ids"`
	RoPEDeltas   int64      `json:"rope_deltas"`
}

// encoded is the case's rt.Encoded for the encoder rows: with HF's M-RoPE
// positions where the oracle has them (Qwen2-VL).
func (c visionCase) encoded(rows []float32) *rt.Encoded {
	if rows == nil {
		return nil
	}
	enc := &rt.Encoded{Rows: [][]float32{rows}}
	if c.PositionIDs[0] != nil {
		enc.Positions, enc.RoPEDelta = c.PositionIDs, c.RoPEDeltas
	}
	return enc
}

// pendingVision names the vision fixtures whose image path archc does not
// run yet, with why: visionFixtures leaves them out (the execution,
// emit and family-coverage tests), TestVisionChatTemplate still reads
// them. Remove a fixture's entry when its family reads images.
var pendingVision = map[string]string{}

// visionFixtures lists testdata/vision/*/ (each with config.json), less
// the pendingVision ones.
func visionFixtures(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, d := range allVisionFixtures(t) {
		if _, pending := pendingVision[filepath.Base(d)]; !pending {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// allVisionFixtures lists testdata/vision/*/ (each with config.json).
func allVisionFixtures(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("testdata/vision/*/config.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no vision fixtures under testdata/vision/ (%v)", err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs
}

func readVisionOracle(t *testing.T, dir string) visionOracle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var o visionOracle
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("%s/oracle.json: %v", dir, err)
	}
	return o
}

// readRawF32 reads a raw little-endian float32 file.
func readRawF32(t *testing.T, path string) []float32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%4 != 0 {
		t.Fatalf("%s: %d bytes is no whole number of float32", path, len(data))
	}
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// encodeCase runs every tile of a case's images through the model's image
// encoder, in prompt order, and returns the rows of all of them.
func encodeCase(t *testing.T, m *rt.Model, dir string, c visionCase) []float32 {
	t.Helper()
	if len(c.PixelValuesFiles) == 0 {
		return nil
	}
	if len(c.ImageGridTHW) > 0 { // Qwen-VL, Pixtral: each image's patch rows through the variable-size encoder
		proc, err := vision.LoadProcessor(dir)
		if err != nil || proc.PatchMerge() == 0 {
			t.Fatalf("a fixture with image_grid_thw needs a processor of patch rows (Qwen-VL, Pixtral): %v", err)
		}
		var rows []float32
		for i, f := range c.PixelValuesFiles {
			px := readRawF32(t, filepath.Join(dir, f))
			g := c.ImageGridTHW[i]
			n := g[0] * g[1] * g[2]
			r, err := m.EncodeSized(context.Background(), "image", n, px, vision.QwenPatchPositions(g, proc.PatchMerge()))
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r...)
		}
		return rows
	}
	sh := c.PixelValuesShape // [1, tiles, 3, H, W] (Idefics3) or [images, 3, H, W] (LLaVA)
	if len(sh) < 3 {
		t.Fatalf("pixel_values_shape %v: want [..., channels, height, width]", sh)
	}
	tile := int(sh[len(sh)-3] * sh[len(sh)-2] * sh[len(sh)-1])
	var rows []float32
	for _, f := range c.PixelValuesFiles {
		px := readRawF32(t, filepath.Join(dir, f))
		if len(px)%tile != 0 {
			t.Fatalf("%s: %d values are no whole number of %d-value tiles", f, len(px), tile)
		}
		for at := 0; at < len(px); at += tile {
			r, err := m.Encode(context.Background(), "image", px[at:at+tile])
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r...)
		}
	}
	return rows
}

// blockedScores is the score budget (lower.Options.ScoreBytes) of
// TestVisionExecution's encoders: 4 KiB, so that every fixture tower's
// bidirectional attention (a few heads over 32 to 256 patches) runs a
// block of query rows per loop trip — with the padding of a variable-size
// encoder and Qwen2.5-VL's windows — as a real tower over thousands of
// patches does at the default budget.
const blockedScores = 4 << 10

// TestVisionExecution: for each vision fixture and case, the image
// encoder's rows equal the HF connector's output within 1e-4, and greedy
// generation with them is the HF fp32 oracle's, token for token, its
// first-step logits within 1e-4. Its encoders run their attention in
// query blocks (blockedScores); TestVisionGGUF's compute the scores at once
// (lower.DefaultScoreBytes): the same oracle checks both forms.
func TestVisionExecution(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	for _, dir := range visionFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			want := readVisionOracle(t, dir)
			ctx := context.Background()
			opts := execOptions(t, dir)
			opts.Plan.Lower.ScoreBytes = blockedScores
			m, err := launch.Open(ctx, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			encoded := checkVisionCases(t, m, dir, want, logitsTolerance, logitsTolerance)
			t.Run("engine", func(t *testing.T) { checkVisionEngine(t, m, want, encoded) })
			t.Run("end_to_end", func(t *testing.T) { checkVisionEndToEnd(t, m, dir, want) })
		})
	}
}

// checkVisionEngine is the serve tier with images: every case submitted
// at once, twice (image requests beside the text-only one, two slots, so
// requests batch and wait for slots), each equals the oracle's tokens; a
// request with an image case's tokens but another case's rows at its
// placeholders (same count) reuses no KV rows of the image positions and
// differs from the oracle, which shows the rows reach the model.
func checkVisionEngine(t *testing.T, m *rt.Model, want visionOracle, encoded map[string]*rt.Encoded) {
	ctx, e := startEngine(t, m, engine.Options{})
	var reqs []engine.Request
	for range 2 {
		for _, c := range want.Cases {
			reqs = append(reqs, engine.Request{Prompt: c.InputIDs, MaxTokens: want.MaxNewTokens, Encoded: encoded[c.Name]})
		}
	}
	for i, got := range submitAll(t, ctx, e, reqs) {
		c := want.Cases[i%len(want.Cases)]
		if diff := cmp.Diff(c.Tokens, got); diff != "" {
			t.Errorf("case %s (round %d) through the engine (-oracle +engine):\n%s", c.Name, i/len(want.Cases), diff)
		}
	}
	// image_text and text_image_text hold the same number of rows (7
	// tiles each): swap them.
	var a, b *visionCase
	for i := range want.Cases {
		switch want.Cases[i].Name {
		case "image_text":
			a = &want.Cases[i]
		case "text_image_text":
			b = &want.Cases[i]
		}
	}
	if a == nil || b == nil || len(encoded[a.Name].Rows[0]) != len(encoded[b.Name].Rows[0]) {
		t.Fatal("the fixture lacks image_text and text_image_text cases of equal tile counts")
	}
	got := submitAll(t, ctx, e, []engine.Request{{Prompt: a.InputIDs, MaxTokens: want.MaxNewTokens, Encoded: a.encoded(encoded[b.Name].Rows[0])}})[0]
	if cmp.Equal(a.Tokens, got) {
		t.Errorf("case %s with case %s's image rows gave the oracle's tokens for its own image: the rows do not reach the model, or a cached prefix of the other image was reused", a.Name, b.Name)
	}
}

// hfMessage is a chat message as transformers' processors take it: the
// content a list of {"type": "text", "text": ...} and {"type": "image"}.
type hfMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// chatMessages converts a case's messages to the chat core's, with parts.
func chatMessages(ms []hfMessage) []chat.Message {
	out := make([]chat.Message, len(ms))
	for i, m := range ms {
		out[i].Role = m.Role
		out[i].Parts = []chat.Part{}
		for _, p := range m.Content {
			out[i].Parts = append(out[i].Parts, chat.Part{Type: p.Type, Text: p.Text})
		}
	}
	return out
}

// TestVisionChatTemplate: the fixture's chat template rendered for each
// case's messages, content as text and image parts, is the text the HF
// processor rendered (before it expands the image placeholders). It
// reads every fixture, the pendingVision ones too (it needs no model).
func TestVisionChatTemplate(t *testing.T) {
	for _, dir := range allVisionFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := readVisionOracle(t, dir)
			tpl, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja"))
			if err != nil {
				t.Fatal(err)
			}
			// bos_token and eos_token as the template sees them (Gemma 3's
			// starts with {{ bos_token }}), from tokenizer_config.json.
			opts := chat.Options{AddGenerationPrompt: true}
			if b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
				var tc struct {
					BOS any `json:"bos_token"`
					EOS any `json:"eos_token"`
				}
				if err := json.Unmarshal(b, &tc); err != nil {
					t.Fatal(err)
				}
				opts.BOS, _ = tc.BOS.(string)
				opts.EOS, _ = tc.EOS.(string)
			}
			text := &rt.Text{ChatTemplate: string(tpl), PartsContent: true}
			for _, c := range want.Cases {
				got, err := chat.Render(string(tpl), chatMessages(c.Messages), opts)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				if got != c.Prompt {
					t.Errorf("%s: rendered %q, the HF processor %q", c.Name, got, c.Prompt)
				}
				if len(c.Images) > 0 {
					continue
				}
				// A text-only conversation as an OpenAI client sends it (string
				// content) renders as the processor's list content does: a
				// vision model's Text passes every content as parts.
				plain := chatMessages(c.Messages)
				for i := range plain {
					for _, p := range plain[i].Parts {
						plain[i].Content += p.Text
					}
					plain[i].Parts = nil
				}
				if got, err := chat.Render(string(tpl), text.Messages(plain), opts); err != nil || got != c.Prompt {
					t.Errorf("%s with string content: rendered %q (%v), the HF processor %q", c.Name, got, err, c.Prompt)
				}
			}
		})
	}
}

// checkVisionEndToEnd runs archc's own path from image files to tokens:
// rt/vision decodes and preprocesses each case's images (the processor
// config of the fixture), the chat core renders its messages with image
// parts, the placeholders expand and the tokenizer gives the prompt's ids
// (equal to the HF processor's input_ids), the encoder runs every tile,
// and greedy generation equals the HF oracle. A second run of the same
// images takes every tile's rows from the encode cache.
// processorWith loads the processor of the fixture in dir with kwargs set
// over its processor_config.json's image_processor, as a processor call
// given them runs.
func processorWith(t *testing.T, dir string, kwargs map[string]any) *vision.Processor {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "processor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	ip, ok := cfg["image_processor"].(map[string]any)
	if !ok {
		t.Fatalf("%s/processor_config.json has no image_processor object", dir)
	}
	for k, v := range kwargs {
		ip[k] = v
	}
	tmp := t.TempDir()
	b, _ = json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(tmp, "processor_config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	proc, err := vision.LoadProcessor(tmp)
	if err != nil {
		t.Fatal(err)
	}
	return proc
}

func checkVisionEndToEnd(t *testing.T, m *rt.Model, dir string, want visionOracle) {
	proc, err := vision.LoadProcessor(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, err := m.Text()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range want.Cases {
		proc := proc
		if c.ImageProcessorKwargs != nil {
			proc = processorWith(t, dir, c.ImageProcessorKwargs)
		}
		var images [][]byte
		for _, name := range c.Images {
			b, err := os.ReadFile(filepath.Join(dir, "images", name))
			if err != nil {
				t.Fatal(err)
			}
			images = append(images, b)
		}
		var im *rt.Images
		var enc *rt.Encoded
		if len(images) > 0 {
			if im, err = m.EncodeImages(ctx, proc, images, vision.Limits{}); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			enc = im.Encoded
		}
		var grids []vision.Grid
		if im != nil {
			grids = im.Grids
		}
		ids, err := text.EncodeChatImages(chatMessages(c.Messages), proc, grids)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if diff := cmp.Diff(c.InputIDs, ids); diff != "" {
			t.Errorf("%s: prompt ids differ from the HF processor's (-hf +archc):\n%s", c.Name, diff)
			continue
		}
		if err := m.ImagePositions(ids, enc, grids, proc, text); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if c.PositionIDs[0] != nil && enc != nil && (!cmp.Equal(enc.Positions, c.PositionIDs) || enc.RoPEDelta != c.RoPEDeltas) {
			t.Errorf("%s: M-RoPE positions (delta %d) differ from HF get_rope_index's (delta %d)", c.Name, enc.RoPEDelta, c.RoPEDeltas)
		}
		g, err := m.Generate(ctx, ids, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Encoded: enc})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.Tokens, g.Tokens); diff != "" {
			t.Errorf("%s: tokens from the image files differ from the HF oracle (-oracle +archc):\n%s", c.Name, diff)
		}
		if len(images) > 0 {
			again, err := m.EncodeImages(ctx, proc, images, vision.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if again.Cached != again.Tiles || !cmp.Equal(again.Encoded.Rows, im.Encoded.Rows) {
				t.Errorf("%s: a second encode of the same images took %d of %d tiles from the cache (want all), rows equal: %v", c.Name, again.Cached, again.Tiles, cmp.Equal(again.Encoded.Rows, im.Encoded.Rows))
			}
		}
	}
}

// checkVisionCases runs each case of a vision fixture on m (the model
// opened from the fixture's folder, or from its GGUF + mmproj twins): its
// images' tiles through the encoder, whose rows must be within rowsTol of
// HF's image features, then greedy generation, token for token the
// oracle's, first-step logits within logitsTol. It returns each case's
// encoder rows.
func checkVisionCases(t *testing.T, m *rt.Model, dir string, want visionOracle, rowsTol, logitsTol float64) map[string]*rt.Encoded {
	t.Helper()
	ctx := context.Background()
	encoded := map[string]*rt.Encoded{}
	for _, c := range want.Cases {
		t.Run(c.Name, func(t *testing.T) {
			rows := encodeCase(t, m, dir, c)
			if len(c.PixelValuesFiles) > 0 {
				feat := readRawF32(t, filepath.Join(dir, "image_features."+c.Name+".f32"))
				if len(rows) != len(feat) {
					t.Fatalf("encoder rows: %d values, HF's image features %d", len(rows), len(feat))
				}
				d := maxAbsDiff32(feat, rows)
				if d > rowsTol {
					t.Errorf("encoder rows differ from HF's image features by %g (max abs)", d)
				}
				t.Logf("encoder rows: max |archc - HF| = %.3g", d)
			}
			enc := c.encoded(rows)
			encoded[c.Name] = enc
			g, err := m.Generate(ctx, c.InputIDs, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Encoded: enc})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.Tokens, g.Tokens); diff != "" {
				t.Errorf("tokens differ from the HF oracle (-oracle +archc):\n%s", diff)
			}
			d := maxAbsDiff(c.FirstLogits, g.FirstLogits)
			if d > logitsTol {
				t.Errorf("first-step logits differ from the oracle by %g (max abs)", d)
			}
			t.Logf("first-step logits: max |archc - HF| = %.3g", d)
		})
	}
	return encoded
}
