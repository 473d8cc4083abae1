// Package vision decodes images and preprocesses them for Idefics3 /
// SmolVLM exactly as Hugging Face transformers does with its PIL backend.
//
// What equals what:
//
//   - Decode equals transformers.image_utils.load_image (PIL Image.open,
//     PIL.ImageOps.exif_transpose, Image.convert("RGB")) for JPEG, PNG,
//     GIF (first frame), BMP and WebP. Lossless formats are bit-exact.
//     JPEG uses Go's IDCT (image/jpeg) with libjpeg-turbo's fancy chroma
//     upsampling and fixed-point colour conversion re-done here, so
//     samples are near but not always equal to libjpeg-turbo's; lossy
//     WebP uses libwebp's fancy upsampler and YUV→RGB arithmetic on Go's
//     (bit-exact) VP8 planes.
//   - Resize equals PIL's Image.resize on an "RGB" image for BILINEAR,
//     BICUBIC, LANCZOS, BOX and HAMMING, bit for bit (Pillow's
//     ImagingResample fixed-point arithmetic).
//   - Idefics3Config.Preprocess equals
//     transformers.models.idefics3.image_processing_pil_idefics3.
//     Idefics3ImageProcessorPil for one image: pixel_values
//     [tiles, 3, H, W] float32 and the rows/cols grid.
//   - ExpandImageToken / ExpandPrompt equal Idefics3Processor's prompt
//     expansion; LoadProcessor reads the files save_pretrained writes.
//
// The exactness numbers are logged by the tests (go test -v -run Exact).
//
// Test data: testdata/gen_vision_testdata.py builds the images with PIL
// and records transformers' outputs. Regenerate with a Python that has
// transformers 5.x and Pillow:
//
//	cd rt/vision/testdata && python gen_vision_testdata.py
//
// The tests read only the files it writes; they need no Python.
package vision
