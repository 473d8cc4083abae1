package driver

import (
	"fmt"
	"maps"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// buildEncoders builds the graph of each encoder the family declares
// (dsl.Encoders: a vision-language family's image encoder and projector),
// its config block bound to config.json's object the encoder names
// (`in vision_config`) with the top level's fields filling what that
// object lacks (Idefics3Config keeps scale_factor and text_config at its
// top level; encoderConfig). source names the config in errors. Nil for a
// text-only family.
func buildEncoders(fam *Family, raw map[string]any, source string) ([]*ir.Graph, error) {
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
		g, err := dsl.BuildEncoder(ef, cfg, lower.Registry{})
		if err != nil {
			return nil, err
		}
		out = append(out, g)
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
