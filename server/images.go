package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/vision"
)

// ImageConfig says how the server takes images (chat completions'
// image_url parts, Responses' input_image, Messages' image blocks).
type ImageConfig struct {
	// Processor is the model's image processor (vision.LoadProcessor of
	// its folder); nil: the server takes no images (a text-only model, or
	// one without its processor config), and a request with one is a 400.
	Processor *vision.Processor
	// MaxImages bounds the images of one request (0: 8).
	MaxImages int
	// MaxPixels bounds an image's width × height, checked from its header
	// before decoding (0: vision.DefaultMaxPixels).
	MaxPixels int64
	// FetchURLs lets image_url be an http(s) URL, fetched with
	// FetchTimeout (0: 10 s) and at most FetchMaxBytes (0: 20 MiB); off,
	// such a URL is a 400.
	FetchURLs     bool
	FetchTimeout  time.Duration
	FetchMaxBytes int64
	// FileDir, when set, lets image_url be a file: URL of a file under it;
	// unset, such a URL is a 400.
	FileDir string
}

// imageRef is one image of a request: the field that holds it (for
// errors: messages[1].content[0].image_url) and its URL.
type imageRef struct {
	field string
	url   string
}

// contentPart is one part of a turn's content: text, or an image (Image
// set: its URL and the caller's field that holds it).
type contentPart struct {
	Text  string
	Image *imageRef
}

// textPart and imagePart are a text part and an image part.
func textPart(s string) contentPart { return contentPart{Text: s} }

func imagePart(url, field string) contentPart {
	return contentPart{Image: &imageRef{field: field, url: url}}
}

// contentParts reads message i's content: a string, or an array of
// {"type": "text", "text"} and {"type": "image_url", "image_url": {"url",
// "detail"}} parts. It returns the text (all text parts joined) and, when
// there is an image, the parts in order. Errors are 400s naming the part.
func (m message) contentParts(i int) (string, []contentPart, error) {
	field := fmt.Sprintf("messages[%d].content", i)
	list, ok := m.Content.([]any)
	if !ok {
		text, err := m.text(i)
		return text, nil, err
	}
	var b strings.Builder
	var parts []contentPart
	images := false
	for j, p := range list {
		pf := fmt.Sprintf("%s[%d]", field, j)
		part, _ := p.(map[string]any)
		switch part["type"] {
		case "text":
			s, ok := part["text"].(string)
			if !ok {
				return "", nil, badRequest(pf+".text", "%s.text must be a string", pf)
			}
			b.WriteString(s)
			parts = append(parts, textPart(s))
		case "image_url":
			u, err := imageURL(part["image_url"], pf+".image_url")
			if err != nil {
				return "", nil, err
			}
			parts = append(parts, imagePart(u, pf+".image_url"))
			images = true
		default:
			return "", nil, badRequest(pf, "%s: content parts must be {\"type\": \"text\", \"text\": ...} or {\"type\": \"image_url\", \"image_url\": {\"url\": ...}}, got type %v", pf, part["type"])
		}
	}
	if images && m.Role != "user" {
		return "", nil, badRequest(field, "%s: images are taken in user turns only", field)
	}
	if !images {
		parts = nil
	}
	return b.String(), parts, nil
}

// imageURL reads an image_url part's value: {"url": ..., "detail": ...}
// (or the URL as a string). detail "low" (a smaller image) is refused:
// archc sends the image as the model's processor makes it.
func imageURL(v any, field string) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		u, ok := x["url"].(string)
		if !ok || u == "" {
			return "", badRequest(field+".url", "%s.url must be a data:, http(s): or file: URL", field)
		}
		if d, ok := x["detail"]; ok && d != nil && d != "auto" && d != "high" {
			return "", badRequest(field+".detail", "%s.detail %v is not supported: the image goes to the model as its processor makes it (auto or high)", field, d)
		}
		return u, nil
	}
	return "", badRequest(field, "%s must be {\"url\": ...}", field)
}

// loadImages reads every referenced image's bytes (loadImage). Errors:
// the model takes no images (naming it), too many images, an image that
// cannot be read — each a 400 naming the field.
func (s *Server) loadImages(ctx context.Context, m *rt.Model, refs []imageRef) ([][]byte, error) {
	if s.cfg.Images.Processor == nil || len(m.Program.Encoders) == 0 {
		why := "it reads text only (its family " + m.Program.Family + " declares no image encoder: images for it are not supported)"
		if m.Program.GGUF != nil && len(m.Program.Encoders) == 0 {
			why = "a GGUF text model reads images through its mmproj file (the image encoder): start infer serve with --mmproj FILE"
		}
		if len(m.Program.Encoders) > 0 {
			why = "its folder has no processor_config.json (the image processor's settings)"
		}
		return nil, badRequest(refs[0].field, "%s: model %s takes no images: %s", refs[0].field, s.cfg.Name, why)
	}
	maxImages := s.cfg.Images.MaxImages
	if maxImages <= 0 {
		maxImages = 8
	}
	if len(refs) > maxImages {
		return nil, badRequest(refs[maxImages].field, "%d images in one request; this server takes at most %d (--max-images)", len(refs), maxImages)
	}
	out := make([][]byte, len(refs))
	for i, r := range refs {
		b, err := s.loadImage(ctx, r)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// loadImage resolves one image URL: data: (base64), http(s) when
// ImageConfig.FetchURLs, file: under ImageConfig.FileDir.
func (s *Server) loadImage(ctx context.Context, r imageRef) ([]byte, error) {
	cfg := s.cfg.Images
	switch {
	case strings.HasPrefix(r.url, "data:"):
		meta, data, ok := strings.Cut(strings.TrimPrefix(r.url, "data:"), ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, badRequest(r.field, "%s: a data: URL must be base64 (data:image/png;base64,...)", r.field)
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, badRequest(r.field, "%s: the data: URL's base64 is corrupt: %v", r.field, err)
		}
		return b, nil
	case strings.HasPrefix(r.url, "http://") || strings.HasPrefix(r.url, "https://"):
		if !cfg.FetchURLs {
			return nil, badRequest(r.field, "%s: this server does not fetch http(s) image URLs (start it with --allow-image-urls); send the image as a data: URL", r.field)
		}
		return fetchImage(ctx, r, cfg)
	case strings.HasPrefix(r.url, "file:"):
		if cfg.FileDir == "" {
			return nil, badRequest(r.field, "%s: this server reads no local image files (start it with --image-dir DIR); send the image as a data: URL", r.field)
		}
		return readImageFile(r, cfg.FileDir)
	}
	return nil, badRequest(r.field, "%s: the URL must be data:, http(s): or file:, got %.40q", r.field, r.url)
}

func fetchImage(ctx context.Context, r imageRef, cfg ImageConfig) ([]byte, error) {
	timeout, limit := cfg.FetchTimeout, cfg.FetchMaxBytes
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if limit <= 0 {
		limit = 20 << 20
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, badRequest(r.field, "%s: %v", r.field, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, badRequest(r.field, "%s: fetching the image failed: %v", r.field, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, badRequest(r.field, "%s: fetching the image gave HTTP %d", r.field, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, badRequest(r.field, "%s: reading the image failed: %v", r.field, err)
	}
	if int64(len(b)) > limit {
		return nil, badRequest(r.field, "%s: the image is over %d bytes", r.field, limit)
	}
	return b, nil
}

func readImageFile(r imageRef, dir string) ([]byte, error) {
	p := strings.TrimPrefix(strings.TrimPrefix(r.url, "file:"), "//")
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, badRequest(r.field, "%s: %v", r.field, err)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if rel, err := filepath.Rel(root, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, badRequest(r.field, "%s: %s is outside the image directory this server reads (--image-dir)", r.field, p)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, badRequest(r.field, "%s: %v", r.field, err)
	}
	return b, nil
}

// noImagePlaceholders refuses a prompt that holds image placeholders
// but comes with no images (field names the prompt's field): the text
// the template rendered (prompt, nil for token ids) counted as the
// model's processor counts it when images come (the same error: "found 2
// <image> tokens and 0 images"), and the ids holding an image encoder's
// placeholder id. Without the images those positions would be decoded
// as plain tokens.
func (s *Server) noImagePlaceholders(m *rt.Model, prompt *string, ids []int32, field string) error {
	if p := s.cfg.Images.Processor; p != nil && prompt != nil {
		if _, err := p.Expand(*prompt, nil); err != nil {
			return badRequest(field, "%v: attach the images, or leave the placeholders out", err)
		}
	}
	for _, e := range m.Program.Encoders {
		n := 0
		for _, id := range ids {
			if id == e.Placeholder {
				n++
			}
		}
		if n > 0 {
			return badRequest(field, "found %d image placeholder tokens (id %d) and 0 images: attach the images, or leave the placeholders out", n, e.Placeholder)
		}
	}
	return nil
}

// encodeImages runs a request's images (data, as loadImages read them)
// through the model (rt.Model.EncodeImages): an image that does not decode
// or preprocess is a 400 naming its field.
func (s *Server) encodeImages(ctx context.Context, m *rt.Model, refs []imageRef, data [][]byte) (*rt.Images, error) {
	im, err := m.EncodeImages(ctx, s.cfg.Images.Processor, data, vision.Limits{MaxPixels: s.cfg.Images.MaxPixels})
	var ie *rt.ImageError
	if errors.As(err, &ie) {
		f := refs[ie.Index].field
		if errors.Is(ie.Err, vision.ErrTooManyPixels) {
			return nil, badRequest(f, "%s: %v (this server's --max-image-pixels)", f, ie.Err)
		}
		return nil, badRequest(f, "%s: %v", f, ie.Err)
	}
	return im, err
}
