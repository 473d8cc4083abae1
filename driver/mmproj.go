package driver

import (
	"fmt"
	"maps"
	"strings"

	"github.com/archc/archc/driver/ggufmap"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/gguf"
)

// readMMProj reads the text GGUF file text with llama.cpp's mmproj file at
// path (general.architecture "clip": a vision-language model's image
// encoder). The family is the one among fams (else the built-in ones)
// whose encoder's gguf section claims the mmproj (its clip.projector_type);
// the text file must be of the architecture the nearest family of its
// extends chain claims. It returns the family, both files as it reads them
// and their config.json equivalent: model_type the family's, the text
// file's fields under the key its match clause nests the text model in
// (text_config), the mmproj's under the key the encoder binds
// (vision_config). Errors name the file and what to do.
func readMMProj(fams []*Family, text *gguf.File, path string) (*Family, *ggufmap.Model, *ggufmap.Model, map[string]any, error) {
	mf, err := gguf.Open(path)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--mmproj: %w", err)
	}
	if err := mf.CheckTypes(); err != nil {
		return nil, nil, nil, nil, err
	}
	if a := mf.Architecture(); a != "clip" {
		return nil, nil, nil, nil, fmt.Errorf("%s: general.architecture %q is not an mmproj file's (llama.cpp's are \"clip\": the image encoder beside a text model's GGUF file)", path, a)
	}
	fam, enc, err := selectMMProj(fams, mf, text)
	if err != nil {
		builtin, berr := BuiltinFamilies()
		if berr != nil {
			return nil, nil, nil, nil, berr
		}
		if fam, enc, berr = selectMMProj(builtin, mf, text); berr != nil {
			return nil, nil, nil, nil, err
		}
	}
	if err := checkTextFamily(fam, text, path); err != nil {
		return nil, nil, nil, nil, err
	}
	tm, err := ggufmap.Read(text, fam.File)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	mm, err := ggufmap.Read(mf, enc)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	mt, _ := tm.Config["model_type"].(string)
	raw, nested := map[string]any{"model_type": mt}, maps.Clone(tm.Config)
	delete(nested, "model_type") // the text model's: its config block's default
	if key, _ := dsl.Nesting(fam.File, mt); key != "" {
		raw[key] = nested
	} else {
		maps.Copy(raw, nested)
	}
	if key := dsl.EncoderKey(enc); key != "" {
		raw[key] = maps.Clone(mm.Config)
	}
	return fam, tm, mm, raw, nil
}

// selectMMProj returns the family, and its encoder, whose encoder's gguf
// section claims mf (dsl.ClaimsGGUF); where several do (one tower beside
// several text models: Qwen3.5's dense and MoE), the one whose text model
// reads text's architecture (checkTextFamily). Errors: none does (naming
// the projector type and the families that read mmproj files), several
// do for text.
func selectMMProj(fams []*Family, mf, text *gguf.File) (*Family, *dsl.File, error) {
	var got, readers []string
	var fam *Family
	var enc *dsl.File
	var claims []struct {
		fam *Family
		enc *dsl.File
	}
	for _, f := range fams {
		if len(f.ModelTypes()) == 0 {
			continue // a mixin (qwen3_vl_images): the families that mix it in read its files
		}
		for _, ef := range dsl.Encoders(f.File) {
			if len(dsl.GGUFArchs(ef)) == 0 {
				continue
			}
			readers = append(readers, f.Name)
			ok, err := dsl.ClaimsGGUF(ef, mf)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				got, fam, enc = append(got, f.Name), f, ef
				claims = append(claims, struct {
					fam *Family
					enc *dsl.File
				}{f, ef})
			}
		}
	}
	pt := "(absent)"
	if v, ok, _ := mf.Meta("clip.projector_type"); ok {
		pt = fmt.Sprintf("%q", fmt.Sprint(v))
	}
	switch len(got) {
	case 0:
		return nil, nil, fmt.Errorf("%s: clip.projector_type %s: no family reads this mmproj file (families with an mmproj mapping: %s; an encoder claims its projector type in a gguf \"clip\" section, docs/arch-language.md)", mf.Path, pt, strings.Join(readers, ", "))
	case 1:
		return fam, enc, nil
	}
	var fit []string
	for _, c := range claims {
		if text != nil && checkTextFamily(c.fam, text, mf.Path) == nil {
			fit, fam, enc = append(fit, c.fam.Name), c.fam, c.enc
		}
	}
	if len(fit) == 1 {
		return fam, enc, nil
	}
	return nil, nil, fmt.Errorf("%s: clip.projector_type %s is claimed by several families: %s (for a text file of architecture %s: %d of them)", mf.Path, pt, strings.Join(got, ", "), archOf(text), len(fit))
}

// checkTextFamily checks that text's general.architecture is claimed by
// the nearest family of fam's extends chain that claims GGUF files (gemma3
// for gemma3_vision, llama for idefics3): a Gemma 3 mmproj beside a llama
// file is an error, not a garbled model.
func checkTextFamily(fam *Family, text *gguf.File, mmproj string) error {
	files, err := builtinFiles()
	if err != nil {
		return err
	}
	name, f := fam.Name, fam.File
	if u, ok := files[name]; ok && f.Extends == "" { // (a resolved file has extends cleared: the built-in's unresolved one has it)
		f = u
	}
	for f != nil {
		if archs := dsl.GGUFArchs(f); len(archs) > 0 {
			for _, a := range archs {
				if strings.TrimSuffix(a, " (conditional)") == text.Architecture() {
					return nil
				}
			}
			return fmt.Errorf("%s: general.architecture %q, but the mmproj file %s belongs to family %s, whose text model is a %s file (%s's): give the text GGUF its mmproj came with", text.Path, text.Architecture(), mmproj, fam.Name, strings.Join(archs, ", "), name)
		}
		if f.Extends == "" {
			break
		}
		name, f = f.Extends, files[f.Extends]
	}
	return fmt.Errorf("%s: family %s reads no GGUF text files (no family it extends claims an architecture)", mmproj, fam.Name)
}

// archOf is text's general.architecture, "(none)" without a text file.
func archOf(text *gguf.File) string {
	if text == nil {
		return "(none)"
	}
	return fmt.Sprintf("%q", text.Architecture())
}
