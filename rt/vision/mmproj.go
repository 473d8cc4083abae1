package vision

import (
	"fmt"
	"math"
)

// Meta looks up a GGUF metadata value as package formats/gguf's
// File.Value gives it (uint64, int64, float64, bool, string; arrays as
// []float64 through MetaFloats): ok is false when the key is absent.
type Meta func(key string) (v any, ok bool)

// ProcessorFromMMProj is the Hugging Face processor of a vision-language
// model kept as llama.cpp's GGUF text file and mmproj file, which hold no
// processor_config.json: the processor its clip.projector_type names,
// with the class defaults of its Hugging Face image processor and what
// the mmproj records (llama.cpp's converter writes them from the
// checkpoint's config and processor config):
//
//	idefics3  Idefics3Processor: tiles of clip.vision.image_size, the
//	          longest edge resized to clip.vision.preproc_image_size (else
//	          4 tiles' worth, the class default's ratio), image_mean/std;
//	          image_seq_len (image_size/patch_size)² / scale_factor²
//	gemma3    Gemma3Processor: one image_size² tile, BILINEAR,
//	          image_mean/std; image_seq_length (image_size/patch_size /
//	          clip.vision.projector.scale_factor, default 4)²
//	mlp       LlavaProcessor (LLaVA-1.5, llama.cpp's legacy mmproj):
//	          CLIPImageProcessor's shortest edge to image_size, BICUBIC,
//	          an image_size² center crop, image_mean/std; one placeholder
//	          per patch (the CLS row dropped: "default")
//
// meta reads the mmproj file's metadata, floats the image_mean and
// image_std arrays. Errors name the key: an unknown projector type (with
// the ones archc reads), a missing or non-positive size.
func ProcessorFromMMProj(meta Meta, floats func(key string) ([]float64, bool)) (*Processor, error) {
	pt, _ := meta("clip.projector_type")
	size, err := metaInt(meta, "clip.vision.image_size", true)
	if err != nil {
		return nil, err
	}
	patch, err := metaInt(meta, "clip.vision.patch_size", true)
	if err != nil {
		return nil, err
	}
	mean, okMean := floats("clip.vision.image_mean")
	std, okStd := floats("clip.vision.image_std")
	if !okMean || !okStd || !okStat(mean) || !okStat(std) {
		return nil, fmt.Errorf("vision: mmproj: clip.vision.image_mean and clip.vision.image_std must be arrays of 1 or 3 floats")
	}
	scale, err := metaInt(meta, "clip.vision.projector.scale_factor", false)
	if err != nil {
		return nil, err
	}
	switch pt {
	case "idefics3":
		if scale == 0 {
			scale = 2
		}
		longest, err := metaInt(meta, "clip.vision.preproc_image_size", false)
		if err != nil {
			return nil, err
		}
		if longest == 0 {
			longest = 4 * size
		}
		c := DefaultIdefics3Config()
		c.Size, c.MaxImageSize = SizeDict{LongestEdge: longest}, SizeDict{LongestEdge: size}
		c.ImageMean, c.ImageStd = mean, std
		side := size / patch
		if side%scale != 0 {
			return nil, fmt.Errorf("vision: mmproj: a %d-patch side does not pixel-shuffle by clip.vision.projector.scale_factor %d", side, scale)
		}
		p := &Processor{Image: c, ImageSeqLen: side * side / (scale * scale)}
		if err := p.Image.check(); err != nil {
			return nil, err
		}
		return p, nil
	case "gemma3":
		if scale == 0 {
			scale = 4 // llama.cpp's default pooling kernel (clip.cpp), written only when it differs
		}
		per := size / patch / scale
		if per < 1 {
			return nil, fmt.Errorf("vision: mmproj: image_size %d, patch_size %d and scale_factor %d leave no image tokens", size, patch, scale)
		}
		c := &PILConfig{DoConvertRGB: true, DoResize: true, Size: SizeDict{Height: size, Width: size}, Resample: Bilinear,
			DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true, ImageMean: mean, ImageStd: std}
		return &Processor{PIL: c, ImageSeqLen: per * per, Gemma3: true}, nil
	case "mlp":
		c := &PILConfig{DoConvertRGB: true, DoResize: true, Resample: Bicubic, DoCenterCrop: true, CropSize: SizeDict{Height: size, Width: size},
			DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true, ImageMean: mean, ImageStd: std}
		return &Processor{PIL: c, shortest: size, PatchSize: patch, AdditionalImageTokens: 1, Strategy: "default"}, nil
	}
	return nil, fmt.Errorf("vision: mmproj: clip.projector_type %v has no image processor in archc (idefics3, gemma3, mlp)", showType(pt))
}

// metaInt reads a positive integer key; absent is 0, or an error when need.
func metaInt(meta Meta, key string, need bool) (int, error) {
	v, ok := meta(key)
	if !ok {
		if need {
			return 0, fmt.Errorf("vision: mmproj: no %s", key)
		}
		return 0, nil
	}
	var n int64
	switch x := v.(type) {
	case uint64:
		if x > math.MaxInt32 {
			return 0, fmt.Errorf("vision: mmproj: %s %d is too large", key, x)
		}
		n = int64(x)
	case int64:
		n = x
	default:
		return 0, fmt.Errorf("vision: mmproj: %s must be an integer, got %v", key, v)
	}
	if n < 1 || n > math.MaxInt32 {
		return 0, fmt.Errorf("vision: mmproj: %s must be positive, got %d", key, n)
	}
	return int(n), nil
}

func showType(v any) string {
	if v == nil {
		return "(absent)"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}
