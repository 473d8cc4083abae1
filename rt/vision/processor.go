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
// keep c's values. A scalar image_mean / image_std is accepted.
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
	return json.Unmarshal(nb, c)
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
