package launch

import (
	"slices"
	"testing"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
)

// TestProgram: the runtime's Program carries the plan's shapes, model
// facts and length policy (phi3-longrope: a LongRoPE that recomputes).
func TestProgram(t *testing.T) {
	p, err := driver.NewPlan(testmodels.Fixture("phi3-longrope"), driver.PlanOptions{Lower: lower.Options{Slots: 2, DecodeBatches: []int64{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	cuda, _ := ireetool.LookupTarget("cuda")
	c := &driver.Compiled{Plan: p, Module: "m.vmfb", Vocab: 256, EOS: []int32{2}, CompilerVersion: "v", Target: cuda}
	prog := Program(c)
	if prog.Target != "cuda" {
		t.Errorf("program target %q, want the compiled module's (cuda)", prog.Target)
	}
	if prog.Module != "m.vmfb" || prog.Vocab != 256 || !slices.Equal(prog.EOS, []int32{2}) || prog.CompilerVersion != "v" {
		t.Errorf("program %+v: module, vocab, EOS or compiler version not carried", prog)
	}
	if prog.Slots != 2 || !slices.Equal(prog.DecodeBatches, []int64{1, 2}) || prog.MaxLen != p.Options.MaxLen || !slices.Equal(prog.PrefillBuckets, p.Options.PrefillBuckets) {
		t.Errorf("program shapes %d slots %v decode %d len %v prefill; plan %+v", prog.Slots, prog.DecodeBatches, prog.MaxLen, prog.PrefillBuckets, p.Options)
	}
	if prog.Lengths != p.Lengths || !prog.Lengths.RecomputeOnDecode() || prog.Family != p.Family.Name || prog.Dir != p.Dir || prog.GGUF != nil {
		t.Errorf("program lengths %+v family %q dir %q: want the plan's (%+v, %q, %q)", prog.Lengths, prog.Family, prog.Dir, p.Lengths, p.Family.Name, p.Dir)
	}
}
