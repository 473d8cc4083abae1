package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// irCmd is `archc ir`: the typed IR of a model, as cmd/compile's -S or
// GOSSAFUNC show the compiler's work, without writing a test.
type irCmd struct {
	Model string `arg:"" help:"Model folder (config.json), a config.json file or a .gguf file."`
	Arch  string `help:"Match the model against the families in this .arch file instead of the built-in ones (the file may extend a built-in family)." type:"existingfile"`
	// MMProj is driver.PlanOptions.MMProj.
	MMProj string `name:"mmproj" help:"llama.cpp's mmproj file (a vision-language model's image encoder) beside a .gguf text model." type:"existingfile"`
	Graph  string `help:"Bind the symbolic dimensions as this graph kind does: prefill (batch 1; seq 1 after the layer loop) or decode (seq 1). Default: both symbolic."`
	// NoWeights skips driver.Plan.CheckWeights.
	NoWeights bool `name:"no-weights" help:"Do not check the checkpoint's tensors (a model folder's safetensors, a GGUF file's tensors) against the weights the graph reads; a bare config.json is never checked."`
}

// Run prints the IR and the state table of the module the default plan
// would emit (lower.StateTable). On a model folder with a checkpoint or a GGUF file
// it first checks every weight the graph reads against the checkpoint, as
// the tests' plan does (driver.Plan.CheckWeights): a missing or mis-shaped
// tensor is an error at the .arch position that reads it.
func (c *irCmd) Run() error {
	p, err := driver.NewGraph(c.Model, driver.PlanOptions{Arch: c.Arch, MMProj: c.MMProj})
	if err != nil {
		return err
	}
	if !c.NoWeights {
		if err := p.CheckWeights(); err != nil {
			return fmt.Errorf("%w\n(archc ir --no-weights prints the IR without checking the checkpoint)", err)
		}
	}
	s, err := p.Graph.Format(ir.FormatOptions{Kind: c.Graph})
	if err != nil {
		return fmt.Errorf("--graph: %w", err)
	}
	mt, _ := p.Raw["model_type"].(string)
	fmt.Printf("# model_type %q: family %s (%s)\n", mt, p.Family.Name, p.Family.Path)
	if st, err := os.Stat(c.Model); err == nil && st.IsDir() && !c.NoWeights && !driver.HasCheckpoint(c.Model) { // a config.json file is never checked
		fmt.Printf("# no checkpoint (safetensors) beside the config: its weights were not checked\n")
	}
	if len(p.Unread) > 0 { // a GGUF's tensors the graph does not read (multi-token prediction), left out
		fmt.Printf("# not read, left out of the weights: %s\n", strings.Join(p.Unread, ", "))
	}
	fmt.Print(s)
	// The state table of the module the default CPU plan would emit
	// (driver.NewPlan's options), and the memory it budgets.
	lo, err := p.FitOptions(driver.PlanOptions{Arch: c.Arch, MMProj: c.MMProj})
	if err != nil {
		return err
	}
	st := lower.StateTable(p.Graph, lo)
	fmt.Printf("%s, default plan\n%s", st.Summary(lo.Slots, lo.MaxLen), st.Format())
	return nil
}
