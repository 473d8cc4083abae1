package main

import (
	"github.com/archc/archc/internal/testmodels"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
	"github.com/archc/archc/internal/golden"
)

// TestAuthoring runs the commands a family's author uses: fmt, ir, new.
func TestAuthoring(t *testing.T) {
	dir := t.TempDir()
	bin := clitest.Build(t, dir, "github.com/archc/archc/cmd/archc")

	t.Run("fmt", func(t *testing.T) {
		if r := clitest.Run(t, bin, "fmt", "-l", "../../archs"); r.Code != 0 || r.Stdout != "" {
			t.Fatalf("fmt -l archs: code %d, stdout %q (files not in the canonical layout; run archc fmt -w archs), stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		messy := filepath.Join(dir, "messy.arch")
		src := "arch messy extends llama{\nmatch model_type \"messy\"   # m\n  block act(x){return activation(x,\"silu\")}\n}\n"
		want := "arch messy extends llama {\n  match model_type \"messy\"  # m\n  block act(x) { return activation(x, \"silu\") }\n}\n"
		os.WriteFile(messy, []byte(src), 0o644)
		if r := clitest.Run(t, bin, "fmt", messy); r.Code != 0 || r.Stdout != want {
			t.Fatalf("fmt: code %d, stdout %q, want %q; stderr %q", r.Code, r.Stdout, want, r.Stderr)
		}
		if r := clitest.Run(t, bin, "fmt", "-l", dir); r.Code != 0 || strings.TrimSpace(r.Stdout) != messy {
			t.Fatalf("fmt -l: code %d, stdout %q; want the messy file", r.Code, r.Stdout)
		}
		if data, _ := os.ReadFile(messy); string(data) != src {
			t.Fatal("fmt without -w changed the file")
		}
		if r := clitest.Run(t, bin, "fmt", "-w", messy); r.Code != 0 || r.Stdout != "" {
			t.Fatalf("fmt -w: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		if data, _ := os.ReadFile(messy); string(data) != want {
			t.Fatalf("fmt -w wrote %q, want %q", data, want)
		}
		bad := filepath.Join(dir, "bad.arch")
		os.WriteFile(bad, []byte("arch bad {\n  x = (1\n}\n"), 0o644)
		r := clitest.Run(t, bin, "fmt", "-w", bad)
		if r.Code != 1 || !regexp.MustCompile(`^`+regexp.QuoteMeta(bad)+`:2:\d+: unexpected`).MatchString(r.Stderr) {
			t.Fatalf("fmt bad.arch: code %d, stderr %q; want %s:2:COL: unexpected ...", r.Code, r.Stderr, bad)
		}
		os.Remove(bad)
	})

	t.Run("ir", func(t *testing.T) {
		r := clitest.Run(t, bin, "ir", fixture, "--graph", "decode")
		if r.Code != 0 {
			t.Fatalf("ir: code %d, stderr %q", r.Code, r.Stderr)
		}
		golden.Check(t, "testdata/ir/llama-tied.decode.txt", []byte(r.Stdout))
		// The same model as a config.json: the same IR; as its GGUF twin,
		// read through llama.arch's gguf section: the same graph (attributes
		// aside: GGUF stores eps in f32 and no rope_parameters).
		if o := clitest.Run(t, bin, "ir", filepath.Join(fixture, "config.json"), "--graph", "decode"); o.Code != 0 || o.Stdout != r.Stdout {
			t.Errorf("ir config.json: code %d, same output %v, stderr %q", o.Code, o.Stdout == r.Stdout, o.Stderr)
		}
		noAttrs := regexp.MustCompile(` attrs=.*? : \[`)
		if o := clitest.Run(t, bin, "ir", testmodels.GGUFTwin(t, filepath.Join(fixture, "model.f32.gguf")), "--graph", "decode"); o.Code != 0 || noAttrs.ReplaceAllString(o.Stdout, " : [") != noAttrs.ReplaceAllString(r.Stdout, " : [") {
			t.Errorf("ir model.f32.gguf: code %d, stderr %q, stdout:\n%s", o.Code, o.Stderr, o.Stdout)
		}
		p := clitest.Run(t, bin, "ir", fixture, "--graph", "prefill")
		if p.Code != 0 || !strings.Contains(p.Stdout, "graph prefill: batch = 1") || !strings.Contains(p.Stdout, ": [1, seq, 64]f32 @llama.arch:") || !strings.Contains(p.Stdout, ": [1, 1, 256]f32 @llama.arch:") {
			t.Errorf("ir --graph prefill: code %d, stderr %q, stdout:\n%s", p.Code, p.Stderr, p.Stdout)
		}
		if b := clitest.Run(t, bin, "ir", fixture, "--graph", "train"); b.Code != 1 || !strings.Contains(b.Stderr, `unknown graph kind "train"`) {
			t.Errorf("ir --graph train: code %d, stderr %q", b.Code, b.Stderr)
		}
		// A family that reads a tensor the checkpoint lacks: archc ir on the
		// folder and on its GGUF twin says so at the .arch position, as
		// the tests' plan would; --no-weights and a bare config.json print
		// the IR.
		biased := filepath.Join(dir, "biased.arch")
		os.WriteFile(biased, []byte("arch biased extends llama {\n  match model_type \"llama\"\n\n  block attn(h) {\n    o = attention(rotary(query(h)), rotary(key(h)), value(h), window: window())\n    return linear(o, self_attn.o_proj, hidden_size, bias: true)\n  }\n}\n"), 0o644)
		missing := regexp.MustCompile(regexp.QuoteMeta(biased) + `:6:[0-9]+: .*missing tensor "model.layers.0.self_attn.o_proj.bias"`)
		for _, model := range []string{fixture, filepath.Join(fixture, "model.f32.gguf")} {
			if o := clitest.Run(t, bin, "ir", model, "--arch", biased); o.Code != 1 || !missing.MatchString(o.Stderr) || !strings.Contains(o.Stderr, "--no-weights") {
				t.Errorf("ir %s --arch biased.arch: code %d, stderr %q; want %s", model, o.Code, o.Stderr, missing)
			}
		}
		// A folder with a config.json alone: the IR, and a line saying no
		// weights were checked.
		bare := filepath.Join(dir, "bare")
		os.Mkdir(bare, 0o755)
		if cfg, err := os.ReadFile(filepath.Join(fixture, "config.json")); err == nil {
			os.WriteFile(filepath.Join(bare, "config.json"), cfg, 0o644)
		}
		if o := clitest.Run(t, bin, "ir", bare); o.Code != 0 || !strings.Contains(o.Stdout, "weights were not checked") {
			t.Errorf("ir on a folder without a checkpoint: code %d, stderr %q; want the IR and a line saying the weights were not checked", o.Code, o.Stderr)
		}
		for _, args := range [][]string{{"ir", fixture, "--arch", biased, "--no-weights"}, {"ir", filepath.Join(fixture, "config.json"), "--arch", biased}} {
			if o := clitest.Run(t, bin, args...); o.Code != 0 || !strings.Contains(o.Stdout, "self_attn.o_proj.bias") {
				t.Errorf("%v: code %d, stderr %q; want the IR", args, o.Code, o.Stderr)
			}
		}
	})

	t.Run("new", func(t *testing.T) {
		// A temp copy of the parts of the repository archc new writes to.
		repo := t.TempDir()
		archs := filepath.Join(repo, "archs")
		specs := filepath.Join(repo, "golden", "fixtures")
		os.MkdirAll(archs, 0o755)
		os.MkdirAll(specs, 0o755)
		llama, err := os.ReadFile("../../golden/fixtures/llama.py")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(specs, "llama.py"), llama, 0o644)
		os.WriteFile(filepath.Join(specs, "other.py"), []byte("FIXTURES = [\n    dict(\n        name=\"osprey\",\n    ),\n]\n"), 0o644)
		gen := filepath.Join(specs, "kestrel.py")
		args := []string{"new", "kestrel", "--extends", "llama", "--model-type", "kestrel", "--dir", archs, "--fixtures", specs}
		r := clitest.Run(t, bin, args...)
		if r.Code != 0 {
			t.Fatalf("new: code %d, stderr %q", r.Code, r.Stderr)
		}
		file := filepath.Join(archs, "kestrel.arch")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"# kestrel.arch — ...ForCausalLM (models/kestrel/modeling_kestrel.py; name its\n# class): llama with ...", "\narch kestrel extends llama {\n", "\n  match model_type \"kestrel\"\n", "\n  config {\n"} {
			if !strings.Contains(string(src), want) {
				t.Errorf("kestrel.arch lacks %q:\n%s", want, src)
			}
		}
		if c := clitest.Run(t, bin, "check", file); c.Code != 0 || !strings.Contains(c.Stdout, "ok (arch kestrel, matches kestrel") {
			t.Errorf("check: code %d, stdout %q, stderr %q", c.Code, c.Stdout, c.Stderr)
		}
		if f := clitest.Run(t, bin, "fmt", "-l", file); f.Code != 0 || f.Stdout != "" {
			t.Errorf("the new file is not in the canonical layout: %q %q", f.Stdout, f.Stderr)
		}
		cfg := filepath.Join(repo, "config.json")
		os.WriteFile(cfg, []byte(`{"model_type": "kestrel", "vocab_size": 32, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 1, "num_attention_heads": 2}`), 0o644)
		if i := clitest.Run(t, bin, "ir", cfg, "--arch", file); i.Code != 0 || !strings.Contains(i.Stdout, `# model_type "kestrel": family kestrel`) {
			t.Errorf("ir --arch kestrel.arch: code %d, stderr %q", i.Code, i.Stderr)
		}
		py, err := os.ReadFile(gen)
		if err != nil {
			t.Fatal(err)
		}
		added := string(py)
		if strings.Contains(string(src), "KestrelForCausalLM") {
			t.Errorf("kestrel.arch carries the guessed class name KestrelForCausalLM (only the fixture entry may, marked as a guess):\n%s", src)
		}
		if !strings.Contains(added, "\nFIXTURES = [\n    # ---- kestrel: llama + ...") || !strings.Contains(added, "        name=\"kestrel\",\n        model_cls=\"KestrelForCausalLM\",  # guessed from the model_type: check it\n") || !strings.HasSuffix(added, "    ),\n]\n") {
			t.Errorf("golden/fixtures/kestrel.py is not a FIXTURES list of the kestrel entry:\n%s", added[:min(len(added), 800)])
		}
		// The entry starts from the parent's fixture (the first of golden/fixtures/llama.py), not from a llama-shaped stub whatever the parent.
		if !regexp.MustCompile(`\n    # Copied from llama-[a-z0-9_-]+'s fixture entry: change what kestrel changes.\n`).MatchString(added) || strings.Count(added, "name=") != 1 || strings.Count(added, "seed=") != 2 {
			t.Errorf("the fixture entry is not a llama fixture's with kestrel's name and seeds:\n%s", added)
		}
		if python, err := exec.LookPath("python3"); err == nil {
			if out, err := exec.Command(python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", gen).CombinedOutput(); err != nil {
				t.Errorf("kestrel.py does not parse: %v\n%s", err, out)
			}
		}
		// Refusals: the file exists; an unknown parent; a model_type a
		// built-in family matches; a name that is not an identifier.
		for _, c := range []struct {
			args []string
			want string
		}{
			{args, "kestrel.arch exists"},
			{[]string{"new", "helium", "--extends", "llama", "--model-type", "helium2", "--dir", archs, "--fixtures", specs}, "family helium exists"},
			{[]string{"new", "osprey", "--extends", "lama", "--model-type", "osprey", "--dir", archs, "--fixtures", specs}, "no built-in family of that name (did you mean llama?)"},
			{[]string{"new", "osprey", "--extends", "llama", "--model-type", "qwen2", "--dir", archs, "--fixtures", specs}, `model_type "qwen2" is matched by family qwen2`},
			{[]string{"new", "osprey-x", "--extends", "llama", "--model-type", "osprey", "--dir", archs, "--fixtures", specs}, `not an identifier`},
			{[]string{"new", "kestrel2", "--extends", "llama", "--model-type", "kestrel2", "--dir", archs, "--fixtures", filepath.Join(repo, "none")}, "--fixtures " + filepath.Join(repo, "none") + " is not a folder"},
			{[]string{"new", "osprey", "--extends", "llama", "--model-type", "osprey", "--dir", archs, "--fixtures", specs}, "other.py already has a fixture named \"osprey\""},
		} {
			if r := clitest.Run(t, bin, c.args...); r.Code != 1 || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("%v: code %d, stderr %q; want %q", c.args, r.Code, r.Stderr, c.want)
			}
		}
		if py2, _ := os.ReadFile(gen); string(py2) != string(py) {
			t.Error("a refused archc new changed kestrel.py")
		}
		if m, _ := filepath.Glob(filepath.Join(archs, "*.arch")); len(m) != 1 {
			t.Errorf("a refused archc new wrote a file: %v", m)
		}
	})
}

// TestGuideTemplate: docs/adding-a-family.md shows the file archc new
// writes, byte for byte.
func TestGuideTemplate(t *testing.T) {
	src, err := template("helium", "llama", "helium")
	if err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("../../docs/adding-a-family.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "```\n"+string(src)+"```\n") {
		t.Errorf("docs/adding-a-family.md does not show the file archc new writes:\n%s", src)
	}
}
