package vision

import "fmt"

// ProcessorFromMMProj is the Hugging Face processor of a model kept as
// llama.cpp's text GGUF and mmproj file (no processor_config.json): the one
// its clip.projector_type names, with its image processor's class defaults
// and what the mmproj records. meta reads the mmproj's metadata as
// formats/gguf's File.Value does, floats its float arrays (image_mean,
// image_std).
//
//	idefics3  Idefics3Processor: image_size tiles, the longest edge to
//	          preproc_image_size (else 4 tiles' worth); image_seq_len
//	          (image_size/patch_size)² / scale_factor²
//	gemma3    Gemma3Processor: one image_size² tile, BILINEAR; image_seq_length
//	          (image_size/patch_size/scale_factor, default 4)²
//	mlp       LlavaProcessor (LLaVA-1.5): shortest edge to image_size,
//	          BICUBIC, center crop; a placeholder per patch
//	qwen2vl_merger
//	          Qwen2VLProcessor: patch_size, merge size from
//	          clip.vision.spatial_merge_size (Qwen2VLVisionModel writes
//	          none: 2, llama.cpp's default too), temporal patch 2 (the
//	          only one the converter splits), min / max pixels from
//	          clip.vision.image_min_pixels / image_max_pixels where a file
//	          has them, else Qwen2VLImageProcessor's class defaults (56·56,
//	          28·28·1280: the converter keeps neither the checkpoint's
//	          min_pixels nor its max_pixels); image_size is not used
//	qwen2.5vl_merger
//	          Qwen2_5_VLProcessor: as qwen2vl_merger
//	qwen3vl_merger
//	          Qwen3VLProcessor (Qwen3.5's, Qwen3-VL's), whose image
//	          processor is Qwen2VLImageProcessor: as qwen2vl_merger (the
//	          converter writes clip.vision.spatial_merge_size)
//	pixtral   PixtralProcessor (Pixtral-12B's LLaVA, Mistral 3): the
//	          longest edge image_size (the tower's, which the checkpoints
//	          set to the processor's), patch_size, the merge from
//	          clip.vision.spatial_merge_size (Mistral 3's; 1 without:
//	          LLaVA's)
//	lfm2      Lfm2VlProcessor (LFM2-VL): patch_size, the downsample
//	          factor from clip.vision.projector.scale_factor (else 2),
//	          everything else Lfm2VlImageProcessor's class defaults, which
//	          llama.cpp's clip.cpp also assumes (tiles of 512, 64 to 256
//	          image tokens: the converter records none of them; image_size
//	          is a placeholder), convert_to_rgb on (clip.cpp's images are RGB)
//
// Errors name the key: an unknown projector type, a missing size.
func ProcessorFromMMProj(meta func(key string) (any, bool), floats func(key string) ([]float64, bool)) (*Processor, error) {
	num := func(key string, def int) (int, error) {
		v, ok := meta(key)
		n, isU := v.(uint64)
		switch {
		case !ok && def >= 0:
			return def, nil
		case !isU || n < 1 || n > 1<<20:
			return 0, fmt.Errorf("vision: mmproj: %s must be a positive integer, got %v", key, v)
		}
		return int(n), nil
	}
	size, err := num("clip.vision.image_size", -1)
	if err != nil {
		return nil, err
	}
	patch, err := num("clip.vision.patch_size", -1)
	if err != nil {
		return nil, err
	}
	scale, err := num("clip.vision.projector.scale_factor", 0)
	if err != nil {
		return nil, err
	}
	mean, okMean := floats("clip.vision.image_mean")
	std, okStd := floats("clip.vision.image_std")
	if !okMean || !okStd || !okStat(mean) || !okStat(std) {
		return nil, fmt.Errorf("vision: mmproj: clip.vision.image_mean and image_std must be arrays of 1 or 3 floats")
	}
	pt, _ := meta("clip.projector_type")
	if pt == "qwen2vl_merger" || pt == "qwen2.5vl_merger" || pt == "qwen3vl_merger" {
		return qwenFromMMProj(num, patch, mean, std)
	}
	if pt == "pixtral" {
		c := DefaultPixtralConfig()
		c.LongestEdge, c.PatchSize, c.ImageMean, c.ImageStd = size, patch, mean, std
		if c.MergeSize, err = num("clip.vision.spatial_merge_size", 1); err != nil {
			return nil, err
		}
		return &Processor{Pixtral: &c}, c.Check()
	}
	if pt == "lfm2" {
		c := DefaultLfm2VlConfig()
		c.EncoderPatchSize, c.ImageMean, c.ImageStd, c.DoConvertRGB = patch, mean, std, true
		if scale > 0 {
			c.DownsampleFactor = scale
		}
		return &Processor{Lfm2Vl: &c}, c.Check()
	}
	switch pt {
	case "idefics3":
		longest, err := num("clip.vision.preproc_image_size", 4*size)
		if err != nil {
			return nil, err
		}
		if scale == 0 {
			scale = 2
		}
		if side := size / patch; side%scale == 0 {
			c := DefaultIdefics3Config()
			c.Size, c.MaxImageSize, c.ImageMean, c.ImageStd = SizeDict{LongestEdge: longest}, SizeDict{LongestEdge: size}, mean, std
			return &Processor{Image: c, ImageSeqLen: side * side / (scale * scale)}, c.check()
		}
	case "gemma3":
		if scale == 0 {
			scale = 4 // llama.cpp's default pooling kernel
		}
		if per := size / patch / scale; per > 0 {
			c := &PILConfig{DoConvertRGB: true, DoResize: true, Size: SizeDict{Height: size, Width: size}, Resample: Bilinear,
				DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true, ImageMean: mean, ImageStd: std}
			return &Processor{PIL: c, ImageSeqLen: per * per, Gemma3: true}, nil
		}
	case "mlp":
		c := &PILConfig{DoConvertRGB: true, DoResize: true, Resample: Bicubic, DoCenterCrop: true, CropSize: SizeDict{Height: size, Width: size},
			DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true, ImageMean: mean, ImageStd: std}
		return &Processor{PIL: c, shortest: size, PatchSize: patch, AdditionalImageTokens: 1, Strategy: "default"}, nil
	default:
		return nil, fmt.Errorf("vision: mmproj: clip.projector_type %q has no image processor in archc (idefics3, gemma3, mlp, qwen2vl_merger, qwen2.5vl_merger, qwen3vl_merger, pixtral, lfm2)", fmt.Sprint(pt))
	}
	return nil, fmt.Errorf("vision: mmproj: image_size %d, patch_size %d and scale_factor %d do not divide into image tokens", size, patch, scale)
}

// qwenFromMMProj is ProcessorFromMMProj's Qwen2VLProcessor (see there):
// num reads an integer key with its default.
func qwenFromMMProj(num func(key string, def int) (int, error), patch int, mean, std []float64) (*Processor, error) {
	c := DefaultQwenVLConfig()
	c.PatchSize, c.ImageMean, c.ImageStd = patch, mean, std
	var err error
	if c.MergeSize, err = num("clip.vision.spatial_merge_size", c.MergeSize); err != nil {
		return nil, err
	}
	if c.MinPixels, err = num("clip.vision.image_min_pixels", c.MinPixels); err != nil {
		return nil, err
	}
	if c.MaxPixels, err = num("clip.vision.image_max_pixels", c.MaxPixels); err != nil {
		return nil, err
	}
	return &Processor{Qwen: &c}, c.Check()
}
