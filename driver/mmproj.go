package driver

import (
	"fmt"
	"maps"
	"strings"

	"github.com/archc/archc/driver/ggufmap"
	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/gguf"
)

// MMProjArch is the general.architecture of llama.cpp's mmproj files (its
// clip.cpp reads them): a vision-language model's image encoder and
// projector, kept beside the text model's GGUF file.
const MMProjArch = "clip"

// mmprojReading is a text GGUF file and its mmproj file read through one
// vision-language family: the text file through the family's gguf section
// (its parent's rows and its own, such as the placeholder token's id),
// the mmproj file through the gguf section of the family's encoder that
// claims it.
type mmprojReading struct {
	family *Family
	text   *ggufmap.Model
	mmproj *ggufmap.Model
	raw    map[string]any // the config.json equivalent of the pair (mmprojConfig)
}

// readMMProj reads the text GGUF file text with the mmproj file at path
// (open: mf, when the caller has it). The family is the one among fams
// (else the built-in families) whose encoder's gguf section claims the
// mmproj file (its clip.projector_type); the text file must be one its
// family chain reads (a SmolVLM's llama file, a Gemma 3's gemma3 file).
// Errors name the file and what to do: not an mmproj file, a projector
// type no family reads, a text file of another family, a section that
// fails on the files (missing keys, tensors archc does not know).
func readMMProj(fams []*Family, text *gguf.File, path string, mf *gguf.File) (*mmprojReading, error) {
	var err error
	if mf == nil {
		if mf, err = gguf.Open(path); err != nil {
			return nil, fmt.Errorf("--mmproj: %w", err)
		}
	}
	if err := mf.CheckTypes(); err != nil {
		return nil, err
	}
	if a := mf.Architecture(); a != MMProjArch {
		return nil, fmt.Errorf("%s: general.architecture %q is not an mmproj file's (llama.cpp's mmproj files are %q: the image encoder beside a text model's GGUF file)", path, a, MMProjArch)
	}
	fam, enc, err := selectMMProj(fams, mf)
	if err != nil {
		builtin, berr := BuiltinFamilies()
		if berr != nil {
			return nil, berr
		}
		if fam, enc, berr = selectMMProj(builtin, mf); berr != nil {
			return nil, err
		}
	}
	if err := checkTextFamily(fam, text, path); err != nil {
		return nil, err
	}
	r := &mmprojReading{family: fam}
	if r.text, err = ggufmap.Read(text, fam.File); err != nil {
		return nil, err
	}
	if r.mmproj, err = ggufmap.Read(mf, enc); err != nil {
		return nil, err
	}
	r.raw = mmprojConfig(fam, enc, r.text.Config, r.mmproj.Config)
	return r, nil
}

// selectMMProj returns the family, and its encoder, whose encoder's gguf
// section claims the mmproj file mf (dsl.ClaimsGGUF: `gguf "clip" if
// meta("clip.projector_type") == "idefics3"`). Errors: no family claims
// it (naming its projector type and the families with an mmproj
// mapping), several do.
func selectMMProj(fams []*Family, mf *gguf.File) (*Family, *dsl.File, error) {
	type claim struct {
		fam *Family
		enc *dsl.File
	}
	var got []claim
	var readers []string
	for _, fam := range fams {
		for _, ef := range dsl.Encoders(fam.File) {
			if len(dsl.GGUFArchs(ef)) == 0 {
				continue
			}
			readers = append(readers, fam.Name)
			ok, err := dsl.ClaimsGGUF(ef, mf)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				got = append(got, claim{fam, ef})
			}
		}
	}
	pt, _, _ := mf.Meta("clip.projector_type")
	switch len(got) {
	case 0:
		return nil, nil, fmt.Errorf("%s: clip.projector_type %v: no family reads this mmproj file (families with an mmproj mapping: %s; a family's encoder claims its projector type in a gguf \"clip\" section, docs/arch-language.md)", mf.Path, showValue(pt), strings.Join(readers, ", "))
	case 1:
		return got[0].fam, got[0].enc, nil
	}
	names := make([]string, len(got))
	for i, c := range got {
		names[i] = c.fam.Name
	}
	return nil, nil, fmt.Errorf("%s: clip.projector_type %v is claimed by several families: %s", mf.Path, showValue(pt), strings.Join(names, ", "))
}

func showValue(v any) string {
	if v == nil {
		return "(absent)"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

// checkTextFamily checks that the text file text is one the family's
// text model reads: its general.architecture is claimed by the nearest
// family of fam's extends chain that claims GGUF architectures (gemma3
// for gemma3_vision, llama for idefics3). A Gemma 3 mmproj beside a llama
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
	return fmt.Errorf("%s: family %s reads no GGUF text files (no family it extends has a gguf section that claims an architecture)", mmproj, fam.Name)
}

// mmprojConfig is the config.json a vision-language checkpoint would
// have: model_type the family's (its first match clause's, as the text
// file's reading sets it), the text file's config under the key its
// match clause nests the text model in (text_config; the wrapper's
// model_type dropped, so the config block's default applies), and the
// mmproj file's under the key the encoder binds (vision_config).
func mmprojConfig(fam *Family, enc *dsl.File, text, vision map[string]any) map[string]any {
	mt, _ := text["model_type"].(string)
	raw := map[string]any{"model_type": mt}
	nested := maps.Clone(text)
	delete(nested, "model_type")
	if key, _ := dsl.Nesting(fam.File, mt); key != "" {
		raw[key] = nested
	} else {
		maps.Copy(raw, nested)
	}
	if key := dsl.EncoderKey(enc); key != "" {
		raw[key] = maps.Clone(vision)
	} else {
		for k, v := range vision {
			if _, has := raw[k]; !has {
				raw[k] = v
			}
		}
	}
	return raw
}

// mergeIndex adds the tensors of an mmproj file's packed index to the text
// file's (their Hugging Face names differ: the encoder's are its own).
func mergeIndex(text, mmproj *weights.Index) {
	for name, info := range mmproj.Tensors {
		if _, ok := text.Tensors[name]; !ok {
			text.Tensors[name] = info
		}
	}
}
