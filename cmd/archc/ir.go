package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt/gguf"
)

// irCmd is `archc ir`: the typed IR of a model, as cmd/compile's -S or
// GOSSAFUNC show the compiler's work, without writing a test.
type irCmd struct {
	Model string `arg:"" help:"Model folder (config.json), a config.json file or a .gguf file."`
	Arch  string `help:"Use this .arch file instead of the built-in families." type:"existingfile"`
	Graph string `help:"Bind the symbolic dimensions as this graph kind does: prefill (batch 1; seq 1 after the layer loop) or decode (seq 1). Default: both symbolic."`
}

func (c *irCmd) Run() error {
	g, fam, mt, err := buildIR(c.Model, c.Arch)
	if err != nil {
		return err
	}
	s, err := g.Format(ir.FormatOptions{Kind: c.Graph})
	if err != nil {
		return fmt.Errorf("--graph: %w", err)
	}
	fmt.Printf("# model_type %q: family %s (%s)\n%s", mt, fam.Name, fam.Path, s)
	return nil
}

// buildIR resolves a model's family as emit does (driver.NewPlan: a GGUF
// file read through the gguf section of the family that claims it, else
// config.json) and builds its IR, without lowering it or reading weights.
// It returns the graph, the family and the config's model_type.
func buildIR(model, arch string) (*ir.Graph, *driver.Family, string, error) {
	var fams []*driver.Family
	if arch != "" {
		f, err := driver.LoadFamily(arch)
		if err != nil {
			return nil, nil, "", err
		}
		fams = []*driver.Family{f}
	} else {
		var err error
		if fams, err = driver.BuiltinFamilies(); err != nil {
			return nil, nil, "", err
		}
	}
	var raw map[string]any
	if driver.IsGGUF(model) {
		gf, err := gguf.Open(model)
		if err != nil {
			return nil, nil, "", err
		}
		m, err := driver.ReadGGUF(fams, gf)
		if err != nil {
			return nil, nil, "", err
		}
		raw = m.Config
	} else {
		path := model
		if st, err := os.Stat(model); err != nil {
			return nil, nil, "", fmt.Errorf("model %s: %w", model, err)
		} else if st.IsDir() {
			path = filepath.Join(model, "config.json")
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, "", fmt.Errorf("model %s: %w (a model folder needs config.json)", model, err)
		}
		if raw, err = dsl.DecodeConfig(data); err != nil {
			return nil, nil, "", fmt.Errorf("%s: %w", path, err)
		}
	}
	fam, cfg, err := driver.ResolveFamily(fams, raw)
	if err != nil {
		return nil, nil, "", err
	}
	g, err := dsl.Build(fam.File, cfg, lower.Registry{})
	if err != nil {
		return nil, nil, "", err
	}
	mt, _ := raw["model_type"].(string)
	return g, fam, mt, nil
}
