package vision

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/webp"
)

// DefaultMaxPixels is the pixel-count limit used when Limits.MaxPixels is
// 0: PIL's Image.MAX_IMAGE_PIXELS (178956970), above which PIL warns of a
// decompression bomb.
const DefaultMaxPixels = 178956970

// Limits bounds what Decode accepts; the zero value uses the defaults.
type Limits struct {
	// MaxPixels is the largest width×height accepted, checked from the
	// header before any pixel is decoded. 0 means DefaultMaxPixels; a
	// negative value disables the check.
	MaxPixels int64
}

// Format names an encoded image format that Decode recognises.
type Format string

// The formats Decode supports, recognised by their magic bytes.
const (
	FormatJPEG Format = "jpeg"
	FormatPNG  Format = "png"
	FormatGIF  Format = "gif"
	FormatBMP  Format = "bmp"
	FormatWebP Format = "webp"
)

// ErrUnknownFormat is wrapped by Decode's error for bytes that are none of
// the supported formats.
var ErrUnknownFormat = errors.New("vision: unknown image format (supported: JPEG, PNG, GIF, BMP, WebP)")

// ErrTooManyPixels is wrapped by Decode's error for an image whose header
// declares more pixels than Limits.MaxPixels.
var ErrTooManyPixels = errors.New("vision: image exceeds the pixel limit")

// Sniff returns the format of data from its leading magic bytes, or
// ErrUnknownFormat.
func Sniff(data []byte) (Format, error) {
	switch {
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return FormatJPEG, nil
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return FormatPNG, nil
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		return FormatGIF, nil
	case bytes.HasPrefix(data, []byte("BM")):
		return FormatBMP, nil
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return FormatWebP, nil
	}
	return "", ErrUnknownFormat
}

// Decode decodes an encoded image (JPEG baseline or progressive, PNG of any
// bit depth and colour type, GIF's first frame, BMP, WebP lossy or
// lossless) into 8-bit RGB [H, W, 3] the way transformers'
// image_utils.load_image does with PIL: Image.open,
// PIL.ImageOps.exif_transpose (EXIF Orientation 2–8 from a JPEG APP1 Exif
// segment, else its XMP tiff:Orientation; a PNG eXIf chunk; a WebP EXIF
// chunk, else its XMP chunk) and then Image.convert("RGB"): grey
// replicated; alpha dropped, not composited (RGBA, LA, PA); palette
// looked up; 16-bit grey saturated at 255 (PIL's I;16 → RGB), other
// 16-bit PNGs take the high byte; Adobe CMYK JPEG through PIL's cmyk2rgb.
// JPEG samples are libjpeg-turbo's (see jpegdec.go), lossy WebP's are
// libwebp's. A single transparent colour that PIL keeps in
// info["transparency"] is reported in RGB8.Transparency, not applied
// (Idefics3Config.Preprocess applies it as transformers does).
//
// The header is read first (image.DecodeConfig) and an image over
// lim.MaxPixels is refused with an error naming its size and the limit,
// wrapping ErrTooManyPixels, before pixels are decoded. Unrecognised bytes
// give an error wrapping ErrUnknownFormat that lists the supported
// formats; truncated or corrupt data gives an error naming the format.
// Decode never panics on bad input.
func Decode(data []byte, lim Limits) (img *RGB8, err error) {
	f, err := Sniff(data)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("vision: decode %s: corrupt data (decoder panic: %v)", f, r)
		}
	}()
	cfg, err := decodeConfig(f, data)
	if err != nil {
		return nil, fmt.Errorf("vision: decode %s header: %w", f, fixEOF(err))
	}
	if cfg.Width < 1 || cfg.Height < 1 {
		return nil, fmt.Errorf("vision: decode %s: empty image (%dx%d)", f, cfg.Width, cfg.Height)
	}
	limit := lim.MaxPixels
	if limit == 0 {
		limit = DefaultMaxPixels
	}
	if n := int64(cfg.Width) * int64(cfg.Height); limit > 0 && n > limit {
		return nil, fmt.Errorf("%w: %s image is %dx%d = %d pixels, limit is %d",
			ErrTooManyPixels, f, cfg.Width, cfg.Height, n, limit)
	}
	var m image.Image
	var key *[3]uint8
	switch f {
	case FormatJPEG:
		// libjpeg-exact samples; image/jpeg for layouts that decoder
		// leaves out (and to report errors on corrupt data).
		if m, err = decodeJPEGExact(data); err != nil {
			m, err = jpeg.Decode(bytes.NewReader(data))
		}
	case FormatPNG:
		m, err = png.Decode(bytes.NewReader(data))
	case FormatGIF:
		m, err = gif.Decode(bytes.NewReader(data))
	case FormatBMP:
		m, err = bmp.Decode(bytes.NewReader(data))
	case FormatWebP:
		m, err = webp.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("vision: decode %s: %w", f, fixEOF(err))
	}
	if pm, ok := m.(*image.Paletted); ok && f == FormatGIF {
		m = gifCanvas(pm, data, cfg.Width, cfg.Height)
	}
	if b := m.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return nil, fmt.Errorf("vision: decode %s: header says %dx%d but decoded %dx%d", f, cfg.Width, cfg.Height, b.Dx(), b.Dy())
	}
	info := srcInfo{format: f, pngType: -1}
	switch f {
	case FormatGIF:
		pal, ti, err := gifFirstPalette(data)
		if err != nil {
			return nil, fmt.Errorf("vision: decode gif: %w", err)
		}
		info.gifPal = pal
		if ti >= 0 {
			key = paletteKey(pal, ti)
		}
	case FormatPNG:
		meta := parsePNGMeta(data)
		info.pngType, info.pngBits = meta.colorType, meta.depth
		var pal []rawColor
		if pm, ok := m.(*image.Paletted); ok {
			pal = paletteRGB(pm.Palette)
		}
		key = pngKey(meta, pal)
	}
	img, err = toRGB8(m, info)
	if err != nil {
		return nil, fmt.Errorf("vision: decode %s: %w", f, err)
	}
	img.Transparency = key
	img = orient(img, orientation(f, data))
	return img, nil
}

// gifCanvas places a first frame that does not cover the GIF's logical
// screen on a screen-sized canvas as Pillow's GifImagePlugin does for
// frame 0: the uncovered area holds the transparent index when the frame
// has one, else index 0 (not the background index).
func gifCanvas(pm *image.Paletted, data []byte, w, h int) image.Image {
	screen := image.Rect(0, 0, w, h)
	if pm.Rect == screen {
		return pm
	}
	fill := uint8(0)
	if _, ti, err := gifFirstPalette(data); err == nil && ti >= 0 {
		fill = uint8(ti)
	}
	c := image.NewPaletted(screen, pm.Palette)
	for i := range c.Pix {
		c.Pix[i] = fill
	}
	r := pm.Rect.Intersect(screen)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(c.Pix[c.PixOffset(r.Min.X, y):c.PixOffset(r.Max.X, y)], pm.Pix[pm.PixOffset(r.Min.X, y):pm.PixOffset(r.Max.X, y)])
	}
	return c
}

// DecodeHeader returns the format and the header's width and height
// without decoding pixels.
func DecodeHeader(data []byte) (Format, int, int, error) {
	f, err := Sniff(data)
	if err != nil {
		return "", 0, 0, err
	}
	cfg, err := decodeConfig(f, data)
	if err != nil {
		return f, 0, 0, fmt.Errorf("vision: decode %s header: %w", f, fixEOF(err))
	}
	return f, cfg.Width, cfg.Height, nil
}

func decodeConfig(f Format, data []byte) (cfg image.Config, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt header (decoder panic: %v)", r)
		}
	}()
	r := bytes.NewReader(data)
	switch f {
	case FormatJPEG:
		return jpeg.DecodeConfig(r)
	case FormatPNG:
		return png.DecodeConfig(r)
	case FormatGIF:
		return gif.DecodeConfig(r)
	case FormatBMP:
		return bmp.DecodeConfig(r)
	case FormatWebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, ErrUnknownFormat
}

// fixEOF turns a bare io.EOF / io.ErrUnexpectedEOF from a decoder into an
// error that says the data is truncated.
func fixEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated data: %w", err)
	}
	return err
}
