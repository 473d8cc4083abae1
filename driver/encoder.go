package driver

import (
	"fmt"
	"maps"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// BuildEncoders builds the graph of each encoder the family declares
// (dsl.Encoders: a vision-language family's image encoder and projector),
// its config block bound to config.json's object the encoder names
// (`in vision_config`) with the top level's fields filling what that
// object lacks (Idefics3Config keeps scale_factor and text_config at its
// top level; encoderConfig). source names the config in errors. Nil for a
// text-only family.
//
// An encoder with a variable size is built at each of sizes (nil:
// lower.DefaultEncoderSizes), the decoder holding the largest.
func BuildEncoders(fam *Family, raw map[string]any, source string, sizes []int64) ([]*ir.Graph, error) {
	var out []*ir.Graph
	for _, ef := range dsl.Encoders(fam.File) {
		bound, err := encoderConfig(raw, dsl.EncoderKey(ef), source, fam.Name, dsl.EncoderName(ef))
		if err != nil {
			return nil, err
		}
		cfg, err := dsl.EvalConfig(ef, bound)
		if err != nil {
			return nil, fmt.Errorf("%s: encoder %s: %w", source, dsl.EncoderName(ef), err)
		}
		if dsl.EncoderOver(ef) == "" {
			g, err := dsl.BuildEncoder(ef, cfg, lower.Registry{}, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
			continue
		}
		if sizes == nil {
			sizes = lower.DefaultEncoderSizes
		}
		var all []*ir.Graph
		for i, n := range sizes {
			if n <= 0 || (i > 0 && n <= sizes[i-1]) {
				return nil, fmt.Errorf("encoder sizes %v (infer's --image-sizes) must be positive and ascending", sizes)
			}
			if n > lower.MaxEncoderSize {
				return nil, fmt.Errorf("encoder size %d (infer's --image-sizes) is past the largest archc compiles, %d rows: every input of a size is padded to it, and its attention holds size² scores per head", n, lower.MaxEncoderSize)
			}
			g, err := dsl.BuildEncoder(ef, cfg, lower.Registry{}, n)
			if err != nil {
				// The size is to blame only if a default size builds.
				if _, derr := dsl.BuildEncoder(ef, cfg, lower.Registry{}, lower.DefaultEncoderSizes[0]); derr != nil {
					return nil, fmt.Errorf("%s: encoder %s: %w", source, dsl.EncoderName(ef), err)
				}
				return nil, fmt.Errorf("encoder %s at size %d (infer's --image-sizes: each size must suit the encoder, e.g. a multiple of its merge window's patches): %w", dsl.EncoderName(ef), n, err)
			}
			g.Size = n
			all = append(all, g)
		}
		if len(all) == 0 {
			return nil, fmt.Errorf("encoder %s needs at least one size", dsl.EncoderName(ef))
		}
		last := all[len(all)-1]
		last.Sizes = all
		out = append(out, last)
	}
	return out, nil
}

// encoderConfig is the object an encoder's config block binds: raw's key
// object, then raw's own fields where that object has none (model_type
// excepted: the object's, else none); raw itself for key "". Errors: key
// is missing or not an object (a checkpoint saved without its vision
// tower's config).
func encoderConfig(raw map[string]any, key, source, family, encoder string) (map[string]any, error) {
	if key == "" {
		return raw, nil
	}
	nested, ok := raw[key].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s must be an object (family %s reads its %s encoder's config from it), got %v", source, key, family, encoder, raw[key])
	}
	out := maps.Clone(nested)
	for k, v := range raw {
		if _, has := out[k]; !has && k != key && k != "model_type" && v != nil {
			out[k] = v
		}
	}
	return out, nil
}
