package vision

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultImageSeqLen is Idefics3Processor's default image_seq_len (169).
const DefaultImageSeqLen = 169

// Processor is the image side of a vision-language model's Hugging Face
// processor: how an image becomes tiles (or patch rows) and how its
// placeholder expands in the prompt. The kinds: Idefics3Processor's
// (SmolVLM: Image, tiles and a tile grid, ImageSeqLen "<image>" tokens per
// tile), LlavaProcessor's (PIL: one resized, center-cropped tile, its
// placeholder repeated once per row the encoder gives), Gemma3Processor's
// (PIL with Gemma3), and Qwen2VLProcessor's (Qwen: patch rows of an image
// resized to any multiple of patch × merge, "<|image_pad|>" repeated once
// per merged patch).
type Processor struct {
	// Image is the Idefics3ImageProcessorPil configuration.
	Image Idefics3Config
	// ImageSeqLen is "image_seq_len", the "<image>" tokens per tile.
	ImageSeqLen int
	// PIL, when set, is the generic PilBackend configuration
	// (CLIPImageProcessor's) of a LlavaProcessor: Image and ImageSeqLen are
	// then not used.
	PIL *PILConfig
	// LlavaProcessor's patch_size, num_additional_image_tokens and
	// vision_feature_select_strategy (with PIL).
	PatchSize, AdditionalImageTokens int
	Strategy                         string
	shortest                         int // PIL's size.shortest_edge (0: height × width)
	// Gemma3, with PIL, is a Gemma3Processor's expansion: each
	// "<start_of_image>" of the prompt becomes "\n\n<start_of_image>",
	// ImageSeqLen (image_seq_length) "<image_soft_token>" and
	// "<end_of_image>\n\n" (its full_image_sequence), or with pan and
	// scan crops the sentence around one such sequence per tile
	// (gemma3Expansion).
	Gemma3 bool
	// PanAndScan, for Gemma3 when do_pan_and_scan is on, cuts an image of
	// a wide enough aspect ratio into crops that follow it as tiles.
	PanAndScan *PanAndScan
	// Qwen, when set, is the Qwen2VLImageProcessorPil configuration of a
	// Qwen2VLProcessor, Qwen2_5_VLProcessor or Qwen3VLProcessor (the same
	// image side): Preprocess gives patch rows and their grid
	// (Idefics3Output.Patches, GridTHW) and each "<|image_pad|>" of the
	// prompt becomes t·h·w/merge_size² copies of itself. The other fields
	// are then not used.
	Qwen *QwenVLConfig
	// Pixtral, when set, is a PixtralProcessor's configuration (Mistral 3,
	// LLaVA with a Pixtral tower): Preprocess gives patch rows and their
	// grid as for Qwen-VL, and each "[IMG]" of the prompt becomes the
	// image's rows of "[IMG]" with "[IMG_BREAK]" after each and
	// "[IMG_END]" after the last. The other fields are then not used.
	Pixtral *PixtralConfig
	// Lfm2Vl, when set, is an Lfm2VlProcessor's configuration (LFM2-VL):
	// Preprocess gives every tile's patch rows and grid
	// (Idefics3Output.Patches, TileGrids), and each "<image>" of the
	// prompt becomes the image's tiles' tokens (Lfm2VlConfig.expand). The
	// other fields are then not used.
	Lfm2Vl *Lfm2VlConfig
}

// PatchMerge is the side of the merge window of a processor that makes
// patch rows (Qwen-VL's merge_size, Pixtral's spatial_merge_size), 0 for
// one that makes tiles.
func (p *Processor) PatchMerge() int {
	switch {
	case p.Qwen != nil:
		return p.Qwen.MergeSize
	case p.Pixtral != nil:
		return p.Pixtral.MergeSize
	case p.Lfm2Vl != nil:
		return p.Lfm2Vl.DownsampleFactor
	}
	return 0
}

// isQwenVL reports whether a processor_class is one whose image side is
// Qwen2VLImageProcessor's with "<|image_pad|>" expansion.
func isQwenVL(class string) bool {
	switch class {
	case "Qwen2VLProcessor", "Qwen2_5_VLProcessor", "Qwen3VLProcessor":
		return true
	}
	return false
}

// loadQwenVLDir reads a Qwen-VL processor folder: processor_config.json's
// nested image_processor (transformers 5.x), else preprocessor_config.json
// (the Hub's layout).
func loadQwenVLDir(dir, procPath string, nested json.RawMessage) (*Processor, error) {
	if len(nested) > 0 && string(nested) != "null" {
		return loadQwenVL(procPath+" image_processor", nested)
	}
	prePath := filepath.Join(dir, "preprocessor_config.json")
	b, err := os.ReadFile(prePath)
	if err != nil {
		return nil, fmt.Errorf("vision: %s: a Qwen-VL processor config without its image_processor: %w", procPath, err)
	}
	return loadQwenVL(prePath, b)
}

// LoadProcessor reads a processor folder. transformers 5.x's
// Idefics3Processor.save_pretrained writes one processor_config.json that
// holds the image processor under "image_processor" next to
// "image_seq_len"; older checkpoints (e.g. SmolVLM on the Hub) have a
// preprocessor_config.json for the image processor and image_seq_len in
// processor_config.json. Both layouts are read: the nested
// "image_processor" wins, else preprocessor_config.json; keys that are
// absent keep DefaultIdefics3Config's values and image_seq_len defaults to
// DefaultImageSeqLen.
//
// Errors: neither file present, unreadable or malformed JSON (naming the
// file), or an invalid configuration.
func LoadProcessor(dir string) (*Processor, error) {
	p := &Processor{Image: DefaultIdefics3Config(), ImageSeqLen: DefaultImageSeqLen}
	var top struct {
		ImageProcessor json.RawMessage `json:"image_processor"`
		ImageSeqLen    *int            `json:"image_seq_len"`
		ProcessorClass string          `json:"processor_class"`
		ImageSeqLength *int            `json:"image_seq_length"`
		PatchSize      int             `json:"patch_size"`
		Additional     *int            `json:"num_additional_image_tokens"`
		Strategy       string          `json:"vision_feature_select_strategy"`
	}
	found := false
	procPath := filepath.Join(dir, "processor_config.json")
	if b, err := os.ReadFile(procPath); err == nil {
		found = true
		if err := json.Unmarshal(b, &top); err != nil {
			return nil, fmt.Errorf("vision: %s: %w", procPath, err)
		}
		if top.ProcessorClass == "LlavaProcessor" {
			return loadLlava(procPath, top.ImageProcessor, top.PatchSize, top.Additional, top.Strategy)
		}
		if top.ProcessorClass == "Gemma3Processor" {
			return loadGemma3(procPath, top.ImageProcessor, top.ImageSeqLength)
		}
		if isQwenVL(top.ProcessorClass) {
			return loadQwenVLDir(dir, procPath, top.ImageProcessor)
		}
		if top.ProcessorClass == "PixtralProcessor" {
			return loadPixtral(procPath, b)
		}
		if top.ProcessorClass == "Lfm2VlProcessor" {
			return loadLfm2Vl(procPath, b)
		}
		if top.ProcessorClass != "" && top.ProcessorClass != "Idefics3Processor" && top.ProcessorClass != "SmolVLMProcessor" {
			return nil, fmt.Errorf("vision: %s: processor_class %q is not one archc implements (Idefics3Processor, SmolVLMProcessor, LlavaProcessor, Gemma3Processor, Qwen2VLProcessor, Qwen2_5_VLProcessor, Qwen3VLProcessor, PixtralProcessor, Lfm2VlProcessor)", procPath, top.ProcessorClass)
		}
		if top.ImageSeqLen != nil {
			p.ImageSeqLen = *top.ImageSeqLen
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vision: %w", err)
	}
	if top.ProcessorClass == "" {
		// The Hub's Qwen-VL checkpoints name their processor_class in
		// preprocessor_config.json and may have no processor_config.json.
		prePath := filepath.Join(dir, "preprocessor_config.json")
		if b, err := os.ReadFile(prePath); err == nil {
			var pre struct {
				ProcessorClass string `json:"processor_class"`
			}
			if json.Unmarshal(b, &pre) == nil && isQwenVL(pre.ProcessorClass) {
				return loadQwenVL(prePath, b)
			}
		}
	}
	if len(top.ImageProcessor) > 0 && string(top.ImageProcessor) != "null" {
		if err := unmarshalConfig(top.ImageProcessor, &p.Image); err != nil {
			return nil, fmt.Errorf("vision: %s image_processor: %w", procPath, err)
		}
	} else {
		prePath := filepath.Join(dir, "preprocessor_config.json")
		b, err := os.ReadFile(prePath)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !found {
				return nil, fmt.Errorf("vision: %s has neither processor_config.json nor preprocessor_config.json", dir)
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("vision: %w", err)
			}
		} else if err := unmarshalConfig(b, &p.Image); err != nil {
			return nil, fmt.Errorf("vision: %s: %w", prePath, err)
		}
	}
	if err := p.Image.check(); err != nil {
		return nil, err
	}
	if p.ImageSeqLen < 1 {
		return nil, fmt.Errorf("vision: image_seq_len must be positive, got %d", p.ImageSeqLen)
	}
	return p, nil
}

// unmarshalConfig decodes an image-processor JSON over c, so absent keys
// keep c's values; a "size" or "max_image_size" present replaces the whole
// dictionary. A scalar image_mean / image_std is accepted.
func unmarshalConfig(b []byte, c *Idefics3Config) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, k := range []string{"image_mean", "image_std"} {
		if v, ok := raw[k]; ok {
			var f float64
			if json.Unmarshal(v, &f) == nil {
				nb, _ := json.Marshal([]float64{f})
				raw[k] = nb
			}
		}
	}
	nb, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(nb, c); err != nil {
		return err
	}
	// A size dictionary replaces the default one; it is not merged.
	for k, dst := range map[string]*SizeDict{"size": &c.Size, "max_image_size": &c.MaxImageSize} {
		if v, ok := raw[k]; ok {
			var sd SizeDict
			if err := json.Unmarshal(v, &sd); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*dst = sd
		}
	}
	return nil
}

// Preprocess runs the image processor on one decoded image and returns
// its pixel values and the "<image>" expansion for it.
func (p *Processor) Preprocess(img *RGB8) (*Idefics3Output, string, error) {
	if p.Qwen != nil {
		out, err := p.Qwen.Preprocess(img)
		if err != nil {
			return nil, "", err
		}
		return out, strings.Repeat(ImagePad, p.Qwen.Tokens(out.GridTHW)), nil
	}
	if p.Pixtral != nil {
		out, err := p.Pixtral.Preprocess(img)
		if err != nil {
			return nil, "", err
		}
		text, err := expandPixtral(ImgToken, []Grid{p.GridOf(out)}, p.Pixtral.MergeSize)
		return out, text, err
	}
	if p.Lfm2Vl != nil {
		out, err := p.Lfm2Vl.Preprocess(img)
		if err != nil {
			return nil, "", err
		}
		return out, p.Lfm2Vl.lfm2Expansion(p.GridOf(out)), nil
	}
	if p.PanAndScan != nil {
		return p.panAndScan(img)
	}
	if p.PIL != nil {
		out, err := p.PIL.pilPreprocess(img, p.shortest)
		if err != nil {
			return nil, "", err
		}
		if p.Gemma3 {
			return out, gemma3Expansion(p.ImageSeqLen, 0), nil
		}
		return out, strings.Repeat(ImageToken, p.GridOf(out).Tokens), nil
	}
	out, err := p.Image.Preprocess(img)
	if err != nil {
		return nil, "", err
	}
	return out, ExpandImageToken(out.Rows, out.Cols, p.ImageSeqLen), nil
}

// GridOf is the Grid that Expand reads for an image Preprocess gave out:
// its tile grid, for a LLaVA processor its placeholder count, for a
// Qwen-VL or Pixtral one its patch grid and image-token count.
func (p *Processor) GridOf(out *Idefics3Output) Grid {
	g := Grid{Rows: out.Rows, Cols: out.Cols}
	switch {
	case p.Qwen != nil:
		g.THW, g.Tokens = out.GridTHW, p.Qwen.Tokens(out.GridTHW)
	case p.Pixtral != nil:
		g.THW, g.Tokens = out.GridTHW, p.Pixtral.Tokens(out.GridTHW)
	case p.Lfm2Vl != nil:
		g.Tokens = p.Lfm2Vl.TokensFor(out.Height, out.Width)
	case p.Gemma3:
		g.Tokens, g.Crops = p.ImageSeqLen, out.Crops
	case p.PIL != nil:
		g.Tokens = llavaTokens(out.Height, out.Width, p.PatchSize, p.AdditionalImageTokens, p.Strategy)
	}
	return g
}

// Prompt is one prompt's worth of Idefics3Processor output.
type Prompt struct {
	// Text is the prompt with every "<image>" expanded (ExpandPrompt).
	Text string
	// PixelValues holds every image's tiles in prompt order, float32
	// [Tiles, 3, Height, Width]: transformers' pixel_values[0] for a batch
	// of this one prompt (its padding then adds nothing: all tiles of one
	// prompt have the same size).
	PixelValues []float32
	// Tiles, Height and Width are the dimensions of PixelValues.
	Tiles, Height, Width int
	// PatchDim, for a Qwen-VL processor, is the row length of PixelValues,
	// which then holds every image's patch rows in prompt order
	// ([Σ t·h·w, PatchDim]: the processor's pixel_values); Tiles, Height
	// and Width are then 0.
	PatchDim int
	// Grids is each image's split, in prompt order.
	Grids []Grid
}

// PreprocessPrompt processes the images of one prompt, in the order of
// its "<image>" tokens, as Idefics3Processor(images=[imgs], text=[text])
// does: the tiles of all images concatenated and the prompt expanded.
// Errors: a different number of "<image>" tokens and images, or any error
// of Preprocess.
func (p *Processor) PreprocessPrompt(text string, imgs []*RGB8) (*Prompt, error) {
	out := &Prompt{}
	if p.Qwen != nil || p.Pixtral != nil || p.Lfm2Vl != nil {
		for i, img := range imgs {
			o, _, err := p.Preprocess(img)
			if err != nil {
				return nil, fmt.Errorf("image %d: %w", i, err)
			}
			out.PatchDim = o.PatchDim
			out.PixelValues = append(out.PixelValues, o.Patches...)
			out.Grids = append(out.Grids, p.GridOf(o))
		}
		s, err := p.Expand(text, out.Grids)
		if err != nil {
			return nil, err
		}
		out.Text = s
		return out, nil
	}
	for i, img := range imgs {
		o, err := p.Image.Preprocess(img)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", i, err)
		}
		if i > 0 && (o.Height != out.Height || o.Width != out.Width) {
			return nil, fmt.Errorf("vision: image %d has %dx%d tiles, image 0 has %dx%d", i, o.Height, o.Width, out.Height, out.Width)
		}
		out.Height, out.Width = o.Height, o.Width
		out.Tiles += o.Tiles
		out.PixelValues = append(out.PixelValues, o.PixelValues...)
		out.Grids = append(out.Grids, p.GridOf(o))
	}
	s, err := p.Expand(text, out.Grids)
	if err != nil {
		return nil, err
	}
	out.Text = s
	return out, nil
}

// loadLlava reads a LlavaProcessor's processor_config.json: its image
// processor (a CLIPImageProcessor, read as PILConfig) and the prompt
// expansion's patch_size, num_additional_image_tokens (default 1) and
// vision_feature_select_strategy (default "default").
func loadLlava(path string, image json.RawMessage, patch int, additional *int, strategy string) (*Processor, error) {
	if len(image) == 0 || string(image) == "null" {
		return nil, fmt.Errorf("vision: %s: a LlavaProcessor config without its image_processor", path)
	}
	var kind struct {
		Type string `json:"image_processor_type"`
	}
	json.Unmarshal(image, &kind)
	if kind.Type != "" && kind.Type != "CLIPImageProcessor" && kind.Type != "SiglipImageProcessor" {
		return nil, fmt.Errorf("vision: %s: image_processor_type %q is not one archc implements for LLaVA (CLIPImageProcessor, SiglipImageProcessor)", path, kind.Type)
	}
	c, shortest, err := parsePILConfig(image)
	if err != nil {
		return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
	}
	if patch <= 0 {
		return nil, fmt.Errorf("vision: %s: patch_size must be positive, got %d", path, patch)
	}
	p := &Processor{PIL: c, shortest: shortest, PatchSize: patch, AdditionalImageTokens: 1, Strategy: "default"}
	if additional != nil {
		p.AdditionalImageTokens = *additional
	}
	if strategy != "" {
		p.Strategy = strategy
	}
	return p, nil
}

// Gemma 3's image tokens (Gemma3Processor: the tokenizer's boi_token,
// image_token and eoi_token).
const (
	StartOfImage   = "<start_of_image>"
	ImageSoftToken = "<image_soft_token>"
	EndOfImage     = "<end_of_image>"
)

// loadGemma3 reads a Gemma3Processor's processor_config.json: its image
// processor (Gemma3ImageProcessor, PilBackend's resize to height × width,
// rescale and normalize: read as PILConfig; do_pan_and_scan and its
// parameters as PanAndScan) and image_seq_length (default 256).
func loadGemma3(path string, image json.RawMessage, seqLen *int) (*Processor, error) {
	if len(image) == 0 || string(image) == "null" {
		return nil, fmt.Errorf("vision: %s: a Gemma3Processor config without its image_processor", path)
	}
	var kind struct {
		Type string `json:"image_processor_type"`
	}
	json.Unmarshal(image, &kind)
	if kind.Type != "" && kind.Type != "Gemma3ImageProcessor" {
		return nil, fmt.Errorf("vision: %s: image_processor_type %q is not one archc implements for Gemma 3 (Gemma3ImageProcessor)", path, kind.Type)
	}
	c, shortest, err := parsePILConfig(image)
	if err != nil {
		return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
	}
	ps, err := parsePanAndScan(image)
	if err != nil {
		return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
	}
	p := &Processor{PIL: c, shortest: shortest, ImageSeqLen: 256, Gemma3: true, PanAndScan: ps}
	if seqLen != nil {
		p.ImageSeqLen = *seqLen
	}
	if p.ImageSeqLen < 1 {
		return nil, fmt.Errorf("vision: %s: image_seq_length must be positive, got %d", path, p.ImageSeqLen)
	}
	return p, nil
}

// gemma3Sequence is Gemma3Processor's full_image_sequence for n soft tokens.
func gemma3Sequence(n int) string {
	return "\n\n" + StartOfImage + strings.Repeat(ImageSoftToken, n) + EndOfImage + "\n\n"
}

// expandGemma3 replaces the i-th "<start_of_image>" of text with
// gemma3Expansion(seqLen, grids[i].Crops); their count must be the
// number of images.
func expandGemma3(text string, grids []Grid, seqLen int) (string, error) {
	if n := strings.Count(text, StartOfImage); n != len(grids) {
		return "", fmt.Errorf("vision: the number of %s tokens in each prompt should be the same as the number of images passed: found %d %s tokens and %d images", StartOfImage, n, StartOfImage, len(grids))
	}
	var sb strings.Builder
	for _, g := range grids {
		i := strings.Index(text, StartOfImage)
		sb.WriteString(text[:i])
		sb.WriteString(gemma3Expansion(seqLen, g.Crops))
		text = text[i+len(StartOfImage):]
	}
	sb.WriteString(text)
	return sb.String(), nil
}

// panAndScan preprocesses img and its pan-and-scan crops (Gemma3's
// _preprocess with do_pan_and_scan): the whole image first, then each
// crop, every one resized, rescaled and normalized alone; out.Crops
// counts the crops.
func (p *Processor) panAndScan(img *RGB8) (*Idefics3Output, string, error) {
	if p.PIL.DoConvertRGB {
		img = img.FlattenTransparency()
	}
	tiles := append([]*RGB8{img}, p.PanAndScan.Crops(img)...)
	out := &Idefics3Output{Crops: len(tiles) - 1}
	for i, t := range tiles {
		o, err := p.PIL.pilPreprocess(t, p.shortest)
		if err != nil {
			return nil, "", err
		}
		if i > 0 && (o.Height != out.Height || o.Width != out.Width) {
			return nil, "", fmt.Errorf("vision: pan and scan: crop %d preprocessed to %dx%d, the image to %dx%d (a Gemma 3 image processor resizes to one size)", i, o.Height, o.Width, out.Height, out.Width)
		}
		out.Height, out.Width = o.Height, o.Width
		out.Tiles++
		out.PixelValues = append(out.PixelValues, o.PixelValues...)
	}
	return out, gemma3Expansion(p.ImageSeqLen, out.Crops), nil
}

// Placeholder is the string a rendered prompt carries per image, which
// Expand replaces: "<start_of_image>" for Gemma 3, "<|image_pad|>" for
// Qwen-VL, "[IMG]" for Pixtral, else "<image>".
func (p *Processor) Placeholder() string {
	if p.Qwen != nil {
		return ImagePad
	}
	if p.Pixtral != nil {
		return ImgToken
	}
	if p.Gemma3 {
		return StartOfImage
	}
	return ImageToken
}

// RowToken is the token an expanded prompt holds once per encoder row,
// whose id the model's merge replaces (its image_token_id):
// "<|image_pad|>" for Qwen-VL, "<image_soft_token>" for Gemma 3, else
// "<image>".
func (p *Processor) RowToken() string {
	if p.Qwen != nil {
		return ImagePad
	}
	if p.Pixtral != nil {
		return ImgToken
	}
	if p.Gemma3 {
		return ImageSoftToken
	}
	return ImageToken
}

// Expand replaces each image placeholder of a rendered prompt, in order,
// with its expansion as the model's processor does: Idefics3's tile grid
// (ExpandPrompt with grids), LLaVA's repeated placeholder (one per
// encoder row of the image), Qwen-VL's "<|image_pad|>" repeated
// Grid.Tokens (t·h·w/merge²) times, or Pixtral's rows of "[IMG]" with
// "[IMG_BREAK]" and "[IMG_END]" (expandPixtral). Errors: a placeholder count other
// than the image count; for Qwen-VL a "<|video_pad|>" (video is not
// supported).
func (p *Processor) Expand(text string, grids []Grid) (string, error) {
	if p.Pixtral != nil {
		return expandPixtral(text, grids, p.Pixtral.MergeSize)
	}
	if p.Lfm2Vl != nil {
		return p.Lfm2Vl.expand(text, grids)
	}
	if p.Qwen != nil {
		if strings.Contains(text, VideoPad) {
			return "", fmt.Errorf("vision: the prompt has %s: video input is not supported for Qwen-VL models (images only)", VideoPad)
		}
		tokens := make([]int, len(grids))
		for i, g := range grids {
			tokens[i] = g.Tokens
		}
		return expandRepeat(text, ImagePad, tokens)
	}
	if p.PIL == nil {
		return ExpandPrompt(text, grids, p.ImageSeqLen)
	}
	if p.Gemma3 {
		return expandGemma3(text, grids, p.ImageSeqLen)
	}
	tokens := make([]int, len(grids))
	for i, g := range grids {
		tokens[i] = g.Tokens
	}
	return expandRepeat(text, ImageToken, tokens)
}
