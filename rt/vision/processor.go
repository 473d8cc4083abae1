package vision

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DefaultImageSeqLen is Idefics3Processor's default image_seq_len (169).
const DefaultImageSeqLen = 169

// Processor is the image side of transformers' Idefics3Processor: the
// image-processor configuration and the number of "<image>" tokens per
// tile.
type Processor struct {
	// Image is the Idefics3ImageProcessorPil configuration.
	Image Idefics3Config
	// ImageSeqLen is "image_seq_len", the "<image>" tokens per tile.
	ImageSeqLen int
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
	}
	found := false
	procPath := filepath.Join(dir, "processor_config.json")
	if b, err := os.ReadFile(procPath); err == nil {
		found = true
		if err := json.Unmarshal(b, &top); err != nil {
			return nil, fmt.Errorf("vision: %s: %w", procPath, err)
		}
		if top.ImageSeqLen != nil {
			p.ImageSeqLen = *top.ImageSeqLen
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("vision: %w", err)
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
	out, err := p.Image.Preprocess(img)
	if err != nil {
		return nil, "", err
	}
	return out, ExpandImageToken(out.Rows, out.Cols, p.ImageSeqLen), nil
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
		out.Grids = append(out.Grids, Grid{o.Rows, o.Cols})
	}
	s, err := ExpandPrompt(text, out.Grids, p.ImageSeqLen)
	if err != nil {
		return nil, err
	}
	out.Text = s
	return out, nil
}
