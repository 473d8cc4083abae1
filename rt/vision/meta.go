package vision

import (
	"bytes"
	"encoding/binary"
	"errors"
	"regexp"
)

// pngMeta is what PIL's PngImagePlugin reads from the chunks that Go's
// image/png does not report: the IHDR colour type and bit depth, the raw
// tRNS chunk and the eXIf chunk.
type pngMeta struct {
	colorType, depth int
	trns, exif       []byte
	hasTRNS          bool
}

// parsePNGMeta walks the PNG chunk list (no CRC check; Go's decoder does
// that). It stops quietly at the first malformed chunk.
func parsePNGMeta(data []byte) pngMeta {
	m := pngMeta{colorType: -1}
	p := 8
	for p+8 <= len(data) {
		n := int(binary.BigEndian.Uint32(data[p:]))
		typ := string(data[p+4 : p+8])
		if n < 0 || p+8+n > len(data) {
			break
		}
		body := data[p+8 : p+8+n]
		switch typ {
		case "IHDR":
			if n >= 10 {
				m.depth, m.colorType = int(body[8]), int(body[9])
			}
		case "tRNS":
			m.trns, m.hasTRNS = body, true
		case "eXIf":
			if m.exif == nil {
				m.exif = body
			}
		case "IEND":
			return m
		}
		p += 12 + n
	}
	return m
}

// pngKey returns the colour key PIL leaves in info["transparency"] after
// convert("RGB") (and that transformers' convert_to_rgb then whitens),
// measured against Pillow 13:
//
//   - palette: a tRNS with exactly one 0 and 255 elsewhere (PIL's
//     _simple_palette) keys that entry's RGB; any other palette tRNS is
//     kept as bytes, which convert("RGB") drops (no key);
//   - grey, 2/4/8 bits: PIL converts its tRNS grey g to RGB unscaled, key
//     (g, g, g) (so a 2- or 4-bit key only ever matches black);
//   - grey, 1 and 16 bits ("1" and "I;16" modes): the integer survives
//     convert("RGB") as is and convert("RGBA") reads it as (g&255, 0, 0)
//     (1-bit g is scaled to 0/255 by PIL first);
//   - RGB, 8 and 16 bits: the tRNS colour, each channel truncated to its
//     low byte as convert_transparent does with 16-bit values.
func pngKey(meta pngMeta, pal []rawColor) *[3]uint8 {
	if !meta.hasTRNS {
		return nil
	}
	t := meta.trns
	switch meta.colorType {
	case 3:
		idx := -1
		for i, a := range t {
			switch a {
			case 0:
				if idx >= 0 {
					return nil
				}
				idx = i
			case 255:
			default:
				return nil
			}
		}
		if idx < 0 {
			return nil
		}
		return paletteKey(pal, idx)
	case 0:
		if len(t) < 2 {
			return nil
		}
		g := int(binary.BigEndian.Uint16(t))
		switch meta.depth {
		case 1:
			if g != 0 {
				g = 255
			}
			return &[3]uint8{uint8(g), 0, 0}
		case 16:
			return &[3]uint8{uint8(g), 0, 0}
		}
		if g > 255 {
			return nil
		}
		return &[3]uint8{uint8(g), uint8(g), uint8(g)}
	case 2:
		if len(t) < 6 {
			return nil
		}
		return &[3]uint8{t[1], t[3], t[5]}
	}
	return nil
}

// paletteKey is the RGB of palette entry i (black past the palette's end,
// as PIL's zero-filled palette gives).
func paletteKey(pal []rawColor, i int) *[3]uint8 {
	var k [3]uint8
	if i >= 0 && i < len(pal) {
		k = pal[i]
	}
	return &k
}

// gifFirstPalette returns the colour table of the first image in a GIF
// (its local table, else the global one) exactly as stored, and the
// transparent index of the Graphic Control Extension before it (-1 when
// none). PIL's GifImagePlugin uses these for the first frame's "P" (or
// "L") image and info["transparency"].
func gifFirstPalette(data []byte) ([]rawColor, int, error) {
	bad := errors.New("corrupt GIF block structure")
	if len(data) < 13 {
		return nil, -1, bad
	}
	readTable := func(p, flags int) ([]rawColor, int, error) {
		n := 1 << ((flags & 7) + 1)
		if p+3*n > len(data) {
			return nil, p, bad
		}
		t := make([]rawColor, n)
		for i := range t {
			t[i] = rawColor{data[p+3*i], data[p+3*i+1], data[p+3*i+2]}
		}
		return t, p + 3*n, nil
	}
	var global []rawColor
	p := 13
	var err error
	if data[10]&0x80 != 0 {
		if global, p, err = readTable(p, int(data[10])); err != nil {
			return nil, -1, err
		}
	}
	trans := -1
	for p < len(data) {
		switch data[p] {
		case 0x21: // extension
			if p+2 > len(data) {
				return nil, -1, bad
			}
			label := data[p+1]
			p += 2
			first := true
			for {
				if p >= len(data) {
					return nil, -1, bad
				}
				n := int(data[p])
				p++
				if n == 0 {
					break
				}
				if p+n > len(data) {
					return nil, -1, bad
				}
				if label == 0xF9 && first && n >= 4 {
					if data[p]&1 != 0 {
						trans = int(data[p+3])
					} else {
						trans = -1
					}
				}
				first = false
				p += n
			}
		case 0x2C: // image descriptor
			if p+10 > len(data) {
				return nil, -1, bad
			}
			flags := int(data[p+9])
			if flags&0x80 != 0 {
				local, _, err := readTable(p+10, flags)
				return local, trans, err
			}
			return global, trans, nil
		default:
			return nil, -1, bad
		}
	}
	return nil, -1, bad
}

// xmpOrientation is the pattern PIL's Image.getexif uses on XMP when the
// EXIF has no Orientation.
var xmpOrientation = regexp.MustCompile(`tiff:Orientation(="|>)([0-9])`)

// orientation returns the EXIF Orientation (1–8, 1 when absent or
// unreadable) that PIL.ImageOps.exif_transpose would see for the file:
// the first JPEG APP1 "Exif" segment (else the XMP APP1 packet), a PNG
// eXIf chunk, or a WebP EXIF chunk (else its XMP chunk).
func orientation(f Format, data []byte) int {
	var exif, xmp []byte
	switch f {
	case FormatJPEG:
		exif, xmp = jpegMeta(data)
	case FormatPNG:
		exif = parsePNGMeta(data).exif
	case FormatWebP:
		exif, xmp = webpMeta(data)
	}
	if o, ok := exifOrientation(exif); ok {
		return o
	}
	if m := xmpOrientation.FindSubmatch(xmp); m != nil {
		return int(m[2][0] - '0')
	}
	return 1
}

// jpegMeta returns the payload of the first APP1 Exif segment and of the
// first APP1 XMP segment, scanning markers up to the first SOS.
func jpegMeta(data []byte) (exif, xmp []byte) {
	p := 2
	for p+4 <= len(data) {
		if data[p] != 0xFF {
			return
		}
		marker := data[p+1]
		if marker == 0xFF { // fill byte
			p++
			continue
		}
		if marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01 {
			p += 2
			continue
		}
		if marker == 0xDA || marker == 0xD9 {
			return
		}
		n := int(binary.BigEndian.Uint16(data[p+2:]))
		if n < 2 || p+2+n > len(data) {
			return
		}
		seg := data[p+4 : p+2+n]
		if marker == 0xE1 {
			if bytes.HasPrefix(seg, []byte("Exif\x00\x00")) && exif == nil {
				exif = seg
			} else if bytes.HasPrefix(seg, []byte("http://ns.adobe.com/xap/1.0/\x00")) && xmp == nil {
				xmp = seg[29:]
			}
		}
		p += 2 + n
	}
	return
}

// webpMeta returns the EXIF and XMP chunk payloads of a RIFF WebP file.
func webpMeta(data []byte) (exif, xmp []byte) {
	p := 12
	for p+8 <= len(data) {
		id := string(data[p : p+4])
		n := int(binary.LittleEndian.Uint32(data[p+4:]))
		if n < 0 || p+8+n > len(data) {
			return
		}
		switch id {
		case "EXIF":
			exif = data[p+8 : p+8+n]
		case "XMP ":
			xmp = data[p+8 : p+8+n]
		}
		p += 8 + n + n&1
	}
	return
}

// exifOrientation reads tag 0x0112 from IFD0 of an EXIF block (with or
// without the "Exif\0\0" prefix), as PIL's Exif.load does.
func exifOrientation(b []byte) (int, bool) {
	b = bytes.TrimPrefix(b, []byte("Exif\x00\x00"))
	if len(b) < 8 {
		return 0, false
	}
	var bo binary.ByteOrder
	switch string(b[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0, false
	}
	off := int(bo.Uint32(b[4:]))
	if off < 8 || off+2 > len(b) {
		return 0, false
	}
	n := int(bo.Uint16(b[off:]))
	for i := 0; i < n; i++ {
		e := off + 2 + 12*i
		if e+12 > len(b) {
			return 0, false
		}
		if bo.Uint16(b[e:]) != 0x0112 {
			continue
		}
		typ, cnt := bo.Uint16(b[e+2:]), bo.Uint32(b[e+4:])
		if cnt != 1 {
			return 0, false
		}
		switch typ {
		case 3: // SHORT
			return int(bo.Uint16(b[e+8:])), true
		case 4: // LONG
			return int(bo.Uint32(b[e+8:])), true
		}
		return 0, false
	}
	return 0, false
}
