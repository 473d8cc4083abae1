package main

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl"
)

// newCmd is `archc new`: the first two files of a new family, ready to
// fill in (docs/adding-a-family.md).
type newCmd struct {
	Name      string `arg:"" help:"The family's arch name (an identifier, e.g. helium); the file is DIR/NAME.arch."`
	Extends   string `required:"" help:"The built-in family it extends (the nearest parent, as HF's modular file names it)."`
	ModelType string `name:"model-type" required:"" help:"The config.json model_type it matches."`
	Dir       string `default:"archs" help:"Folder to write NAME.arch into."`
	Fixtures  string `default:"golden/fixtures" help:"Folder of fixture specs (FAMILY.py each, read by golden/gen_fixtures.py) where NAME.py gets the family's first fixture entry; empty: none."`
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *newCmd) Run() error {
	path := filepath.Join(c.Dir, c.Name+".arch")
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists; archc new writes new families only", path)
	}
	src, err := c.archSource()
	if err != nil {
		return err
	}
	var fixtures []byte
	spec := filepath.Join(c.Fixtures, c.Name+".py")
	if c.Fixtures != "" {
		if fixtures, err = c.fixtureSpec(); err != nil {
			return err
		}
	}
	if st, err := os.Stat(c.Dir); err != nil || !st.IsDir() {
		return fmt.Errorf("--dir %s is not a folder (run archc new from the repository root, or pass --dir)", c.Dir)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s\n", path)
	if fixtures != nil {
		if err := os.WriteFile(spec, fixtures, 0o644); err != nil {
			return err
		}
		fmt.Printf("wrote %s (the fixture %q)\n", spec, c.Name)
	}
	fmt.Printf(`next (docs/adding-a-family.md):
  1. write what %[1]s does differently from %[2]s into %[3]s: config defaults, block overrides, a gguf section if llama.cpp has the architecture
  2. bin/archc check %[3]s && bin/archc fmt -w %[3]s
  3. fill in the %[1]s entry of %[4]s, then: .venv-oracle/bin/python golden/gen_fixtures.py --only %[1]s
  4. go build -o bin/ ./cmd/... && bin/archc ir golden/testdata/%[1]s --graph decode
  5. go test ./golden -run 'TestEmitGolden/^%[1]s$' -update && go test ./golden -count=1 -args -fixture %[1]s
`, c.Name, c.Extends, path, spec)
	return nil
}

// archSource returns the new family file, checked (as `archc check` does)
// and in the canonical layout.
func (c *newCmd) archSource() ([]byte, error) {
	if !identRE.MatchString(c.Name) {
		return nil, fmt.Errorf("family name %q is not an identifier (letters, digits, _)", c.Name)
	}
	if c.ModelType == "" || strings.ContainsAny(c.ModelType, "\"\\\n") {
		return nil, fmt.Errorf("--model-type %q: want a model_type as config.json spells it", c.ModelType)
	}
	fams, err := driver.BuiltinFamilies()
	if err != nil {
		return nil, err
	}
	var names []string
	parent := false
	for _, f := range fams {
		names = append(names, f.Name)
		parent = parent || f.Name == c.Extends
		if f.Name == c.Name {
			return nil, fmt.Errorf("family %s exists (%s)", c.Name, f.Path)
		}
		for _, mt := range f.ModelTypes() {
			if mt == c.ModelType {
				return nil, fmt.Errorf("model_type %q is matched by family %s (%s): extend that file, or give the new family a conditional match", c.ModelType, f.Name, f.Path)
			}
		}
	}
	if !parent {
		return nil, fmt.Errorf("--extends %s: no built-in family of that name%s (families: %s)", c.Extends, dsl.DidYouMean(c.Extends, names), strings.Join(names, ", "))
	}
	out, err := template(c.Name, c.Extends, c.ModelType)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "archc-new")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	check := filepath.Join(tmp, c.Name+".arch")
	if err := os.WriteFile(check, out, 0o644); err != nil {
		return nil, err
	}
	if _, err := driver.LoadFamily(check); err != nil {
		return nil, err
	}
	return out, nil
}

// template is the new family file in the canonical layout: a header
// naming the HF modeling file (its class is left for the author to name:
// a guess from the model_type is wrong often enough, GraniteMoeShared vs
// Granitemoeshared, that the file should not carry it), extends, match and
// an empty config block.
func template(name, parent, modelType string) ([]byte, error) {
	src := fmt.Sprintf(`# %[1]s.arch — ...ForCausalLM (models/%[2]s/modeling_%[2]s.py; name its
# class): %[3]s with ... (say what differs from %[3]s, as the HF modeling or
# modular file does). Read by package dsl; config names are HF config.json's,
# verbatim.
arch %[1]s extends %[3]s {
  match model_type %[4]q

  config {
    # config.json fields %[1]s adds, or whose defaults differ from %[3]s's:
    # name: type = default
  }
}
`, name, modelType, parent, modelType)
	return dsl.Format(name+".arch", []byte(src))
}

// camelCase guesses transformers' class prefix from a model_type
// (helium → Helium, gemma3_text → Gemma3Text); the user checks it against
// the modeling file.
func camelCase(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// fixtureSpec is the family's fixture spec file (golden/fixtures/NAME.py):
// a FIXTURES list holding fixtureEntry. Errors: --fixtures is not a folder,
// NAME.py exists, or a spec file already has a fixture of that name.
func (c *newCmd) fixtureSpec() ([]byte, error) {
	if st, err := os.Stat(c.Fixtures); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--fixtures %s is not a folder of fixture specs (run archc new from the repository root, or pass --fixtures \"\" for none)", c.Fixtures)
	}
	spec := filepath.Join(c.Fixtures, c.Name+".py")
	if _, err := os.Stat(spec); err == nil {
		return nil, fmt.Errorf("%s exists; archc new writes new families only", spec)
	}
	files, err := filepath.Glob(filepath.Join(c.Fixtures, "*.py"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(b), fmt.Sprintf("name=%q,", c.Name)) {
			return nil, fmt.Errorf("%s already has a fixture named %q", f, c.Name)
		}
	}
	parent, _ := os.ReadFile(filepath.Join(c.Fixtures, c.Extends+".py")) // none: the stub entry
	return []byte(fmt.Sprintf(`# The fixtures of family %[1]s (archs/%[1]s.arch), read by gen_fixtures.py:
# each entry's keys are FIXTURES' (see gen_fixtures.py), its names
# (model classes, TINY, switches, hooks) gen_fixtures.py's.
FIXTURES = [
%[2]s]
`, c.Name, c.fixtureEntry(string(parent)))), nil
}

// fixtureEntry is the family's first fixture entry, given the parent
// family's spec file (empty if it has none): a copy of the parent's
// fixture entry (parentEntry: its config, weight scales, switches and
// checks, which a family extending it mostly keeps) with the name, class
// names and seeds replaced; or, where the parent has no entry, the fields
// every entry has (FIXTURE_DEFAULTS fills the usual random-weight scales)
// and the config to fill in. The seed is derived from the name.
func (c *newCmd) fixtureEntry(parentSpec string) string {
	seed := 1000 + crc32.ChecksumIEEE([]byte(c.Name))%8000
	camel := camelCase(c.ModelType)
	head := fmt.Sprintf(`    # ---- %[1]s: %[2]s + ... (archs/%[1]s.arch). Written by archc new: check
    # the class names against models/%[3]s/modeling_%[3]s.py, give config the
    # fields archs/%[1]s.arch reads at values that exercise them (explicit
    # head_dim, GQA, odd sizes; prompts longer than any window; moe=True for
    # a mixture of experts), and a switch per feature that must matter.
`, c.Name, c.Extends, c.ModelType)
	ids := fmt.Sprintf(`        name=%q,
        model_cls="%sForCausalLM",  # guessed from the model_type: check it
        config_cls="%sConfig",
`, c.Name, camel, camel)
	seeds := fmt.Sprintf("        seed=%d,\n        prompt_seed=%d,\n", seed, seed+1)
	if parent, body, ok := parentEntry(parentSpec, c.Extends); ok {
		return head + fmt.Sprintf("    # Copied from %s's fixture entry: change what %s changes.\n", parent, c.Name) +
			"    dict(\n" + ids + body + seeds + "    ),\n"
	}
	return head + "    dict(\n" + ids + `        config=dict(
            TINY,
        ),
` + seeds + `        record_rope=True,
        spec_check=False,
    ),
`
}

// parentEntry finds, in the parent family's spec file spec, the entry
// named family, else the first entry, and returns its name and its fields
// but name, model_cls, config_cls, seed and prompt_seed (whole lines at
// the entry's field indentation, with what they continue onto).
func parentEntry(spec, family string) (string, string, bool) {
	entries := strings.Split(spec, "\n    dict(\n")
	find := func(match func(string) bool) (string, string, bool) {
		for _, e := range entries[1:] {
			end := strings.Index(e, "\n    ),\n")
			if end < 0 {
				continue
			}
			e = e[:end+1]
			m := regexp.MustCompile(`(?m)^        name="([^"]*)",$`).FindStringSubmatch(e)
			if m == nil || !match(m[1]) {
				continue
			}
			var body strings.Builder
			skip := false
			for _, line := range strings.SplitAfter(e, "\n") {
				if field, ok := strings.CutPrefix(line, "        "); ok && !strings.HasPrefix(field, " ") && !strings.HasPrefix(field, ")") {
					key, _, _ := strings.Cut(field, "=")
					skip = slices.Contains([]string{"name", "model_cls", "config_cls", "seed", "prompt_seed"}, key)
				}
				if !skip {
					body.WriteString(line)
				}
			}
			return m[1], body.String(), true
		}
		return "", "", false
	}
	if name, body, ok := find(func(n string) bool { return n == family }); ok {
		return name, body, true
	}
	return find(func(string) bool { return true })
}
