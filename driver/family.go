// Package driver is archc's compiler driver: it resolves a checkpoint's
// config (a Hugging Face folder, a config.json or a GGUF file) to a family
// (.arch file), builds the IR, checks the weights, emits the StableHLO
// module, and prepares the weights as IREE parameters (packing GGUF and MLX
// tensors once into the cache). It links neither the IREE worker nor the
// tokenizer: package rt runs what it plans.
package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/archc/archc/archs"
	"github.com/archc/archc/driver/ggufmap"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/lower"
)

// Family is a parsed and checked .arch file.
type Family struct {
	Name string    // arch name, e.g. "llama"
	Path string    // file name ("llama.arch" for built-ins, the path otherwise)
	File *dsl.File // the parsed file
}

// ModelTypes lists the model_type values the family matches.
func (f *Family) ModelTypes() []string { return dsl.ModelTypes(f.File) }

// GGUFArchs lists the general.architecture values of the GGUF files the
// family reads (its gguf section's claim; dsl.GGUFArchs).
func (f *Family) GGUFArchs() []string { return dsl.GGUFArchs(f.File) }

// ReadGGUF reads a GGUF file through the gguf section of the family that
// claims it (dsl.SelectGGUF): one of fams, else one of the built-in
// families (so a family given with --arch that claims no GGUF architecture
// of its own still runs the files its parent reads; its config block and
// match clauses then decide as for a config.json). Errors: no family reads
// the file's architecture, the section fails on the file (ggufmap.Read).
func ReadGGUF(fams []*Family, f *gguf.File) (*ggufmap.Model, error) {
	files := make([]*dsl.File, len(fams))
	for i, fam := range fams {
		files[i] = fam.File
	}
	fam, err := dsl.SelectGGUF(files, f)
	if err != nil {
		builtin, berr := BuiltinFamilies()
		if berr != nil {
			return nil, berr
		}
		files = files[:0]
		for _, b := range builtin {
			files = append(files, b.File)
		}
		if fam, berr = dsl.SelectGGUF(files, f); berr != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
	}
	return ggufmap.Read(f, fam)
}

// ParseFamily parses .arch source, resolves its `extends` chain against
// parents (parsed built-in and sibling files, by arch name; may be nil) and
// checks the result. Errors are `file:line:col: message` diagnostics, one
// per line.
func ParseFamily(name string, src []byte, parents map[string]*dsl.File) (*Family, error) {
	f, err := dsl.Parse(name, src)
	if err != nil {
		return nil, err
	}
	return checkFamily(name, f, parents)
}

// checkFamily resolves a parsed file against parents and checks it. f is
// only read: Resolve builds a new file for a family that extends another
// and Check annotates nothing, so a parsed file may also serve as a parent.
func checkFamily(name string, f *dsl.File, parents map[string]*dsl.File) (*Family, error) {
	f, err := dsl.Resolve(f, lookup(parents))
	if err != nil {
		return nil, err
	}
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		msgs := make([]error, len(errs))
		for i, e := range errs {
			msgs[i] = e
		}
		return nil, errors.Join(msgs...)
	}
	return &Family{Name: f.Name, Path: name, File: f}, nil
}

func lookup(parents map[string]*dsl.File) func(string) (*dsl.File, error) {
	return func(name string) (*dsl.File, error) {
		if f, ok := parents[name]; ok {
			return f, nil
		}
		names := make([]string, 0, len(parents))
		for n := range parents {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no family named %q%s (`archc list` shows the built-in ones; `archc check` resolves the files it is given against each other too)", name, dsl.DidYouMean(name, names))
	}
}

// LoadFamily reads and checks a .arch file from disk; it may extend the
// built-in families.
func LoadFamily(path string) (*Family, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	parents, err := builtinFiles()
	if err != nil {
		return nil, err
	}
	return ParseFamily(path, src, parents)
}

// LoadFamilies reads and checks .arch files that may extend (or mix in)
// each other as well as the built-in families; a given file's family
// stands in for a built-in one of the same name as a parent. errs[i] is
// paths[i]'s error (fams[i] nil then).
func LoadFamilies(paths []string) (fams []*Family, errs []error) {
	fams, errs = make([]*Family, len(paths)), make([]error, len(paths))
	parents, err := builtinFiles()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return fams, errs
	}
	srcs := make([][]byte, len(paths))
	for i, p := range paths {
		if srcs[i], errs[i] = os.ReadFile(p); errs[i] != nil {
			continue
		}
		if f, err := dsl.Parse(p, srcs[i]); err == nil { // a parse error is reported below, by ParseFamily
			parents[f.Name] = f
		}
	}
	for i, p := range paths {
		if errs[i] == nil {
			fams[i], errs[i] = ParseFamily(p, srcs[i], parents)
		}
	}
	return fams, errs
}

// builtinFiles parses the embedded .arch files (unresolved), by arch name:
// a new map each call (its files are shared and only read).
func builtinFiles() (map[string]*dsl.File, error) {
	b, err := builtins()
	if err != nil {
		return nil, err
	}
	return maps.Clone(b.files), nil
}

// BuiltinFamilies returns the families embedded in the binary (archs/*.arch),
// sorted by name: a new slice each call, of families shared by every caller
// in the process (a Family is only read once parsed).
func BuiltinFamilies() ([]*Family, error) {
	b, err := builtins()
	if err != nil {
		return nil, err
	}
	return slices.Clone(b.families), nil
}

// builtinSet is the embedded families, parsed and checked.
type builtinSet struct {
	files    map[string]*dsl.File // unresolved, by arch name
	families []*Family            // resolved and checked, sorted by name
}

// builtins parses and checks the embedded .arch files once per process.
// They are constants of the binary, so this is a memo of a pure function,
// not mutable state: parsing all of them took about 0.45 s of CPU, paid by
// every NewPlan before (hundreds of times in one golden test run).
var builtins = sync.OnceValues(func() (builtinSet, error) {
	// Parsing every family allocates about 260 MiB, of which about 110 MiB
	// stays live: at the default GOGC the collector took a third of the
	// CPU time, which every archc and infer command pays once (0.65 ->
	// 0.36 s of user time for an `archc emit` refusal).
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	names, err := fs.Glob(archs.FS, "*.arch")
	if err != nil {
		return builtinSet{}, err
	}
	sort.Strings(names)
	b := builtinSet{files: map[string]*dsl.File{}}
	parsed := make([]*dsl.File, len(names))
	for i, n := range names {
		src, err := archs.FS.ReadFile(n)
		if err != nil {
			return builtinSet{}, err
		}
		if parsed[i], err = dsl.Parse(n, src); err != nil {
			return builtinSet{}, fmt.Errorf("built-in family %s: %w", n, err)
		}
		b.files[parsed[i].Name] = parsed[i]
	}
	for i, n := range names {
		f, err := checkFamily(n, parsed[i], b.files)
		if err != nil {
			return builtinSet{}, fmt.Errorf("built-in family %s: %w", n, err)
		}
		b.families = append(b.families, f)
	}
	return b, nil
})

// resolution is what resolveFamily found: the family, its evaluated
// config, and where a wrapper config keeps the family's model (dsl.Nesting):
// the nested config.json object the config block bound (nil: the top level)
// and the prefix of the family's weights in the checkpoint ("" for none).
type resolution struct {
	family *Family
	config map[string]any
	nested map[string]any
	bound  map[string]any // what the config block evaluated: raw, or wrapped(raw, key, nested)
	scope  string
	as     string // the family's prefix for the weights under scope (dsl.NestingAs)
}

// resolveFamily picks the family whose match clauses accept the config's
// model_type, and returns it with its evaluated config. raw is a decoded
// config.json (dsl.DecodeConfig), or a GGUF file's metadata read as one;
// source names it in errors. A match clause `in KEY scope PATH` binds the
// config block to raw's KEY object (a multimodal wrapper's text_config);
// a config without KEY (null or absent) is read at its top level, as
// Qwen2VLConfig reads the flat configs Qwen2-VL and Qwen2.5-VL are
// published with (the weights' scope still applies).
// Errors: no model_type, no family matches (the message lists the
// supported model types), KEY is not an object, or the config fails the
// family's config block.
func resolveFamily(fams []*Family, raw map[string]any, source string) (resolution, error) {
	mt, isString := raw["model_type"].(string)
	switch {
	case raw["model_type"] == nil:
		return resolution{}, fmt.Errorf("%s has no model_type; archc needs it to pick a family", source)
	case !isString || mt == "":
		return resolution{}, fmt.Errorf("%s: model_type must be a non-empty string, got %v", source, raw["model_type"])
	}
	var known, failed []string
	var firstErr error
	for _, f := range fams {
		known = append(known, f.ModelTypes()...)
		if !contains(f.ModelTypes(), mt) && !contains(f.ModelTypes(), mt+" (conditional)") {
			continue
		}
		for _, pos := range dsl.MatchConditions(f.File, mt) {
			failed = append(failed, fmt.Sprintf("%s (%s)", f.Name, pos))
		}
		bound, key, scope := raw, "", ""
		var nested map[string]any
		if key, scope = dsl.Nesting(f.File, mt); key != "" && raw[key] != nil {
			var ok bool
			if nested, ok = raw[key].(map[string]any); !ok {
				return resolution{}, fmt.Errorf("%s: %s must be an object (family %s reads model_type %q's text model from it), got %v", source, key, f.Name, mt, raw[key])
			}
			bound = wrapped(raw, key, nested)
		}
		cfg, err := dsl.EvalConfig(f.File, bound)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		ok, err := dsl.Matches(f.File, mt, cfg)
		if err != nil {
			return resolution{}, err
		}
		if ok {
			return resolution{family: f, config: cfg, nested: nested, bound: bound, scope: scope, as: dsl.NestingAs(f.File, mt)}, nil
		}
	}
	if firstErr != nil {
		return resolution{}, fmt.Errorf("%s (model_type %q): %w", source, mt, firstErr)
	}
	if len(failed) > 0 {
		return resolution{}, fmt.Errorf("%s: model_type %q: the config meets none of the match conditions of the families that read it: %s; see the config fields those conditions read", source, mt, strings.Join(failed, ", "))
	}
	sort.Strings(known)
	known = slices.Compact(known)
	return resolution{}, fmt.Errorf("%s: unsupported model_type %q (or an unsupported variant of it); supported: %s. Add a family with an .arch file (--arch FILE)", source, mt, strings.Join(known, ", "))
}

// wrapped is the config a family reads for a wrapper's text model: the
// nested object key of raw, with the fields the wrapper sets at its top
// level first, as Hugging Face's wrapper classes read them
// (Qwen3_5ForConditionalGeneration ties its embeddings by the top level's
// tie_word_embeddings, whatever its text_config says); model_type, which
// chose the family, and key itself are the wrapper's own.
func wrapped(raw map[string]any, key string, nested map[string]any) map[string]any {
	out := maps.Clone(nested)
	for k, v := range raw {
		if k != key && k != "model_type" && v != nil {
			out[k] = v
		}
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// configPath returns the config.json for a model folder or a config file path.
func configPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("model %s: %w", path, err)
	}
	if st.IsDir() {
		return filepath.Join(path, "config.json"), nil
	}
	if !strings.EqualFold(filepath.Ext(path), ".json") {
		return "", fmt.Errorf("model %s: not a model folder, a config.json or a GGUF file; for a checkpoint's weights file give its folder (%s)", path, filepath.Dir(path))
	}
	return path, nil
}
