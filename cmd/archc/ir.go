package main

import (
	"fmt"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl/ir"
)

// irCmd is `archc ir`: the typed IR of a model, as cmd/compile's -S or
// GOSSAFUNC show the compiler's work, without writing a test.
type irCmd struct {
	Model string `arg:"" help:"Model folder (config.json), a config.json file or a .gguf file."`
	Arch  string `help:"Match the model against the families in this .arch file instead of the built-in ones (the file may extend a built-in family)." type:"existingfile"`
	Graph string `help:"Bind the symbolic dimensions as this graph kind does: prefill (batch 1; seq 1 after the layer loop) or decode (seq 1). Default: both symbolic."`
}

func (c *irCmd) Run() error {
	p, err := driver.NewGraph(c.Model, driver.PlanOptions{Arch: c.Arch})
	if err != nil {
		return err
	}
	s, err := p.Graph.Format(ir.FormatOptions{Kind: c.Graph})
	if err != nil {
		return fmt.Errorf("--graph: %w", err)
	}
	mt, _ := p.Raw["model_type"].(string)
	fmt.Printf("# model_type %q: family %s (%s)\n%s", mt, p.Family.Name, p.Family.Path, s)
	return nil
}
