package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt"
)

// specFlags is a parsed --speculative: the drafter's kind and, for a
// draft model, its path; nil when off.
type specFlags struct {
	kind     string // "ngram", "draft" or "mtp" (draftMax: mtp's 1 or mtp:K's K, not --draft-max)
	path     string // the draft model (kind "draft")
	draftMax int
}

// defaultDraftMax is --draft-max's value when it is left at 0, for ngram
// and draft:PATH (mtp's draft length is its K).
const defaultDraftMax = 8

// parseSpeculative parses --speculative for a run on device: nil for ""
// (off). draftMax is --draft-max (0: defaultDraftMax). Kinds archc does
// not implement, a draft model that does not exist, GPU devices (whose
// modules are built without verify entry points) and --draft-max with mtp
// (whose draft length is mtp:K's K) or without --speculative are refused
// by name.
func parseSpeculative(kind string, draftMax int, device string) (*specFlags, error) {
	if (kind == "mtp" || strings.HasPrefix(kind, "mtp:")) && draftMax != 0 {
		return nil, fmt.Errorf("--draft-max %d with --speculative %s: the MTP drafter's length is K in mtp:K (mtp alone: 1); leave --draft-max out", draftMax, kind)
	}
	if kind == "" && draftMax != 0 {
		return nil, fmt.Errorf("--draft-max %d without --speculative: it sets the draft length of --speculative ngram or draft:PATH; give one of them, or leave --draft-max out", draftMax)
	}
	if draftMax == 0 {
		draftMax = defaultDraftMax
	}
	switch {
	case kind == "":
		return nil, nil
	case kind == "draft:":
		return nil, fmt.Errorf("--speculative draft: needs the draft model's path, draft:PATH (a model folder or .gguf with the target's vocabulary)")
	case device != "local-task" && device != "local-sync":
		return nil, fmt.Errorf("--speculative %s: not implemented on --device %s (the verify entry point is built and tested for CPU devices only); leave --speculative out, or use --device local-task", kind, device)
	case kind == "ngram":
		return &specFlags{kind: "ngram", draftMax: draftMax}, nil
	case strings.HasPrefix(kind, "draft:"):
		path := strings.TrimPrefix(kind, "draft:")
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--speculative draft:PATH: %v", err)
		}
		return &specFlags{kind: "draft", path: path, draftMax: draftMax}, nil
	case kind == "mtp":
		return &specFlags{kind: "mtp", draftMax: 1}, nil
	case strings.HasPrefix(kind, "mtp:"):
		k, err := strconv.Atoi(strings.TrimPrefix(kind, "mtp:"))
		if err != nil || k < 1 || k > 16 {
			return nil, fmt.Errorf("--speculative %s: give mtp:K, K from 1 to 16 draft tokens per step (the MTP layer run K times, each on its own last output)", kind)
		}
		return &specFlags{kind: "mtp", draftMax: k}, nil
	}
	return nil, fmt.Errorf("--speculative %q: unknown kind; give ngram (prompt lookup), draft:PATH (a smaller model with the target's vocabulary) or mtp (the model's own multi-token-prediction layers)", kind)
}

// setLower sets the target's compile options for s: its verify buckets
// and, for mtp, its multi-token-prediction module (lower.Options.MTP).
func (s *specFlags) setLower(o *lower.Options) {
	o.VerifyBuckets = s.verifyBuckets()
	o.MTP = s != nil && s.kind == "mtp"
}

// check refuses, before anything is compiled, what s cannot speculate
// with: a model that --speculative mtp cannot draft with (driver.
// CheckWeights reads its config and tensor names; a NoMTPError names the
// MTP tensor the checkpoint dropped), and one-token drafts for a model
// with a recurrent or convolution state, whose drafts have an even length
// (rt.Model.MaxDraft: a rejected step is rerun from the state the other
// parity buffer holds), so that nothing would ever be drafted. Other
// errors are left to launch.Open, which reports them as it always has.
func (s *specFlags) check(model string, plan driver.PlanOptions) error {
	if s == nil {
		return nil
	}
	if s.kind == "mtp" {
		var no *driver.NoMTPError
		if err := driver.CheckWeights(model, plan); errors.As(err, &no) {
			return s.openError(err)
		}
	}
	if s.draftMax == 1 {
		if p, err := driver.NewGraph(model, plan); err == nil && lower.HasFixedState(p.Graph) {
			flag, fix := "--draft-max 1", "give --draft-max 2 or more"
			if s.kind == "mtp" {
				flag, fix = "--speculative mtp (one token per step)", "give --speculative mtp:2 (a chained draft of two)"
			}
			return fmt.Errorf("%s: %s carries a recurrent or convolution state, whose drafts have an even length (a rejected step is rerun from the state before it), so nothing would be drafted: %s", flag, model, fix)
		}
	}
	return nil
}

// openError names --speculative mtp in launch.Open's error for a model
// without MTP layers (driver.NoMTPError); other errors as they are.
func (s *specFlags) openError(err error) error {
	var no *driver.NoMTPError
	if errors.As(err, &no) {
		return fmt.Errorf("--speculative mtp: %w; use --speculative ngram or draft:PATH", err)
	}
	return err
}

// verifyBuckets are the verify entry points the target needs: the
// powers of two below draftMax+1 from 2, and draftMax+1 (a draft and the
// latest token). A verify call costs what its bucket computes, padding
// included, and on a CPU at 1B parameters and up the matmuls of 9 rows
// cost several decode steps (compute, not memory, bound): a one-token
// draft, prompt lookup's common case inside repeats, must not pay for 9.
func (s *specFlags) verifyBuckets() []int64 {
	if s == nil {
		return nil
	}
	var out []int64
	for b := int64(2); b < int64(s.draftMax)+1; b *= 2 {
		out = append(out, b)
	}
	return append(out, int64(s.draftMax)+1)
}

// open returns the speculation for target and a function that releases
// what it opened: a draft model is compiled and loaded with base's device
// options, as many slots as the target and its KV-cache length. Errors:
// the draft model's (compile, load), a vocabulary other than the target's.
func (s *specFlags) open(ctx context.Context, target *rt.Model, base launch.Options) (*rt.Speculation, func(), error) {
	if s == nil {
		return nil, func() {}, nil
	}
	switch s.kind {
	case "ngram":
		return &rt.Speculation{Drafter: rt.PromptLookup{}, DraftMax: s.draftMax}, func() {}, nil
	case "mtp":
		d, err := rt.NewMTPDrafter(target)
		if err != nil {
			return nil, nil, fmt.Errorf("--speculative mtp: %w", err)
		}
		return &rt.Speculation{Drafter: d, DraftMax: s.draftMax}, func() {}, nil
	}
	o := launch.Options{Device: base.Device, Threads: base.Threads, RuntimeFlags: base.RuntimeFlags, Phase: base.Phase, Kernels: base.Kernels, Precision: base.Precision}
	o.Plan.Lower.Slots = target.Program.Slots
	o.Plan.Lower.DecodeBatches = []int64{1}
	o.Plan.Lower.MaxLen = int64(target.MaxLen())
	draft, err := launch.Open(ctx, s.path, o)
	if err != nil {
		return nil, nil, fmt.Errorf("--speculative draft:%s: %w", s.path, err)
	}
	d, err := rt.NewModelDrafter(draft, target)
	if err != nil {
		draft.Close()
		return nil, nil, fmt.Errorf("--speculative draft:%s: %w", s.path, err)
	}
	return &rt.Speculation{Drafter: d, DraftMax: s.draftMax}, func() { draft.Close() }, nil
}
