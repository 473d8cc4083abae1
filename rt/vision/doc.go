// Package vision decodes images and preprocesses them for Idefics3 /
// SmolVLM, LLaVA, Gemma 3 and Qwen-VL the way Hugging Face transformers (5.24) does with its PIL
// backend (Pillow 13), bit for bit on everything the tests cover.
//
// What equals what:
//
//   - Decode equals transformers.image_utils.load_image: PIL Image.open,
//     PIL.ImageOps.exif_transpose, Image.convert("RGB"). JPEG (baseline,
//     progressive, restart markers; grey, YCbCr 4:4:4/4:2:2/4:2:0/4:4:0,
//     Adobe CMYK) is decoded by this package's own decoder, which
//     reproduces libjpeg-turbo: jidctint.c's integer IDCT, jdsample.c's
//     fancy chroma upsampling and jdcolor.c's fixed-point YCbCr→RGB (rarer
//     layouts fall back to image/jpeg, whose IDCT differs by a few levels).
//     Lossy WebP uses golang.org/x/image/webp's VP8 planes with libwebp's
//     fancy upsampler and YUV→RGB arithmetic. PNG (1–16 bit, grey, grey +
//     alpha, palette with or without tRNS, RGB, RGBA), GIF (first frame),
//     BMP and lossless WebP are lossless, so exact by construction; PIL's
//     per-mode convert("RGB") rules (alpha dropped, 16-bit grey saturated,
//     CMYK via cmyk2rgb, palette lookup) are in toRGB8. A single
//     transparent colour that PIL keeps in info["transparency"] is carried
//     as RGB8.Transparency.
//   - Resize equals Image.resize on an "RGB" image for LANCZOS, BICUBIC,
//     BILINEAR, BOX and HAMMING (Pillow's fixed-point ImagingResample,
//     including Pillow 13's choice of pass order).
//   - Idefics3Config.Preprocess equals
//     models.idefics3.image_processing_pil_idefics3.Idefics3ImageProcessorPil
//     for one image (convert_to_rgb's transparency whitening, the
//     longest-edge resize, resize_for_vision_encoder, the row-major tile
//     split plus global image, rescale and normalise): pixel_values
//     float32 [tiles, 3, H, W] and the rows/cols grid.
//   - ExpandImageToken and ExpandPrompt equal Idefics3Processor's
//     replace_image_token / get_text_with_replacements; LoadProcessor reads
//     what Idefics3Processor.save_pretrained writes (5.x: one
//     processor_config.json with "image_processor" inside) and the older
//     preprocessor_config.json + processor_config.json layout.
//   - QwenVLConfig.Preprocess equals
//     models.qwen2_vl.image_processing_pil_qwen2_vl.Qwen2VLImageProcessorPil
//     (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5) for one image:
//     smart_resize (SmartResize), the PIL resize, rescale and normalise,
//     patchify: pixel_values float32 [t·h·w, 3·temporal_patch_size·patch²]
//     in the merger's window order and image_grid_thw. QwenPatchPositions
//     equals the tower's rotary (h, w) ids (vision_utils.
//     get_vision_position_ids), Processor.Expand Qwen2VLProcessor's
//     "<|image_pad|>" expansion, MRoPEPositions Qwen2VLModel.get_rope_index
//     for images (equal to Qwen2.5-VL's and Qwen3-VL's for images; video is
//     refused). Test data: testdata/gen_qwen2vl.py (run with the same
//     Python) writes testdata/qwen2vl/.
//
// Not covered: NEAREST resampling; batches of several prompts (transformers
// pads them to a common tile count with zero tiles and a
// pixel_attention_mask; Processor.PreprocessPrompt handles one prompt and
// its images); 12-bit, arithmetic-coded and YCCK JPEG and unusual sampling
// layouts (4:4:0 and 4:1:1 use libjpeg's upsamplers but are untested;
// layouts other than luma-only subsampling go to image/jpeg, whose IDCT is
// a few levels off); animated WebP and RLE or 16-bit BMP (errors where PIL
// decodes them: golang.org/x/image does not); frames after a GIF's first.
//
// The tests log the exactness counts (go test -v ./rt/vision). Test data:
// testdata/gen_vision_testdata.py builds the images with PIL and records
// transformers' outputs; it is seeded and deterministic. Regenerate with
// a Python that has transformers 5.x, Pillow and tokenizers:
//
//	cd rt/vision/testdata && python gen_vision_testdata.py
//
// The Go tests read only the files it writes; they need no Python.
//
// A larger uncommitted check (300 random resizes, 150 random JPEG/WebP
// files, six photo-sized images through the default processor; about
// 60 MB) is written by testdata/gen_sweep.py and read by
// TestSweepAgainstPIL:
//
//	python testdata/gen_sweep.py /tmp/vsweep
//	VISION_SWEEP_DIR=/tmp/vsweep go test -run Sweep -v ./rt/vision
package vision
