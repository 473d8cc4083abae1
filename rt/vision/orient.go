package vision

// orient applies an EXIF Orientation the way PIL.ImageOps.exif_transpose
// does: 2 FLIP_LEFT_RIGHT, 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE,
// 6 ROTATE_270, 7 TRANSVERSE, 8 ROTATE_90 (PIL's rotations are
// counter-clockwise); any other value leaves the image as is.
func orient(m *RGB8, o int) *RGB8 {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.W, m.H
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := &RGB8{W: ow, H: oh, Pix: make([]uint8, len(m.Pix)), Transparency: m.Transparency}
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			var sx, sy int
			switch o {
			case 2:
				sx, sy = w-1-x, y
			case 3:
				sx, sy = w-1-x, h-1-y
			case 4:
				sx, sy = x, h-1-y
			case 5: // transpose
				sx, sy = y, x
			case 6: // rotate 270 ccw = 90 cw
				sx, sy = y, h-1-x
			case 7: // transverse
				sx, sy = w-1-y, h-1-x
			case 8: // rotate 90 ccw
				sx, sy = w-1-y, x
			}
			copy(out.Pix[(y*ow+x)*3:(y*ow+x)*3+3], m.Pix[(sy*w+sx)*3:])
		}
	}
	return out
}
