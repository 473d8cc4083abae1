package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/archc/archc/driver/kernels"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt"
)

// checkDevice refuses flag combinations the device cannot take, before
// anything is read: a thread count off local-task, a CPU kernel variant
// on a GPU (every weight goes through the plain lowering there).
func checkDevice(device string, threads int, kernelsFlag, precision string) error {
	target, err := ireetool.LookupTarget(device)
	if err != nil {
		return fmt.Errorf("--device: %v", err)
	}
	switch {
	case threads > 0 && device == "local-sync":
		return fmt.Errorf("--threads %d: the local-sync device runs on the calling thread only; use --device local-task to set a thread count", threads)
	case threads > 0 && target.GPU:
		return fmt.Errorf("--threads %d: a thread count is for the local-task device, not %s", threads, device)
	case target.GPU && kernelsFlag != "auto" && kernelsFlag != "none" && kernelsFlag != "":
		return fmt.Errorf("--kernels %s: archc's matmul kernels are CPU code; on --device %s every weight goes through the plain lowering (leave --kernels out)", kernelsFlag, device)
	case target.GPU && precision != "" && precision != kernels.F32:
		return fmt.Errorf("--precision %s: the int8 mode is archc's CPU kernels; on --device %s every weight goes through the plain lowering in f32 (leave --precision out)", precision, device)
	case !target.GPU:
		if _, err := kernels.Select(kernelsFlag, precision); err != nil {
			return fmt.Errorf("--%v", err)
		}
	}
	return nil
}

// buckets returns the sizes given to flag sorted, without repeats; nil
// for none (the device's defaults). A size below 1 is an error.
func buckets(flag string, sizes []int64) ([]int64, error) {
	for _, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("%s %v: each size must be at least 1", flag, sizes)
		}
	}
	if len(sizes) == 0 {
		return nil, nil
	}
	out := slices.Clone(sizes)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// reportDevice prints the kernels line, the state table in one line
// (abi.StateTable.Summary), the GGUF tensors left unread (if any) and, on
// a GPU, the device and the compiled shapes.
func reportDevice(p *rt.Program, device string) {
	fmt.Fprintf(os.Stderr, "kernels: %s, precision %s\n", p.Kernels, p.Precision)
	fmt.Fprintln(os.Stderr, p.States.Summary(p.Slots, p.MaxLen))
	if len(p.Unread) > 0 {
		fmt.Fprintf(os.Stderr, "not read (the graph does not use them, e.g. multi-token prediction): %s\n", strings.Join(p.Unread, ", "))
	}
	if t, _ := ireetool.LookupTarget(device); t.GPU {
		fmt.Fprintf(os.Stderr, "device: %s (target %s), prefill chunks %v, decode batches %v\n", device, p.Target, p.PrefillBuckets, p.DecodeBatches)
	}
}

// bucketFlagError names the flags behind lower's error for a prefill
// (or verify) bucket past the KV-cache length: --prefill-buckets (or
// --draft-max) and --max-len (maxLen as given; 0: the default, fitted to
// the model). Other errors are returned as they are.
func bucketFlagError(err error, maxLen int64) error {
	var be *lower.BucketError
	if !errors.As(err, &be) {
		return err
	}
	flag, fix := "--prefill-buckets", "give buckets of at most %d tokens"
	if be.Kind == "verify" {
		flag, fix = "--draft-max", "give a --draft-max below %d"
	}
	given := fmt.Sprintf("--max-len %d", be.MaxLen)
	if maxLen == 0 {
		given = fmt.Sprintf("the KV-cache length, %d tokens (--max-len 0: the default for this model)", be.MaxLen)
	}
	return fmt.Errorf("%s: a %s bucket of %d tokens is longer than %s; "+fix+", or a larger --max-len", flag, be.Kind, be.Size, given, be.MaxLen)
}
