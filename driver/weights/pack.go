package weights

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// NeedsPack reports whether some tensor of ix is still a view of other
// tensors (an MLX affine tensor's parts, Affine; or a stack of tensors,
// Stack): PackAffine or PackStacks must run before its data can be read.
func (ix *Index) NeedsPack() bool {
	for _, info := range ix.Tensors {
		if (info.Source != nil || info.Stack != nil) && info.File == "" {
			return true
		}
	}
	return false
}

// packViews writes the tensors of ix that parts selects (a non-nil result:
// the tensors each is made of) into one cache file under cacheDir, named
// <prefix>-<hash of version and the parts' files, sizes, times and
// ranges>.packed, each tensor's bytes (data builds them) 64-byte aligned,
// and returns a copy of ix with those tensors pointing into the file. A
// file of the expected size is reused; a new one is written under a
// temporary name and renamed (WriteCacheFile). progress, if not nil, gets
// bytes written so far and the total. Errors name the checkpoint, the
// tensor and the problem (read or write failure, ctx ending, described by
// what: "packing MLX weights").
func (ix *Index) packViews(ctx context.Context, cacheDir, prefix, version, what string, parts func(Info) []Info, data func(Info) ([]byte, error), progress func(done, total int64)) (*Index, error) {
	var names []string
	for n, info := range ix.Tensors {
		if parts(info) != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := &Index{Source: ix.Source, Tensors: map[string]Info{}}
	for n, info := range ix.Tensors {
		out.Tensors[n] = info
	}
	if len(names) == 0 {
		return out, nil
	}
	abs, err := filepath.Abs(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("weights: bad cache folder %q: %v", cacheDir, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", version)
	var total int64
	offs := map[string]int64{}
	for _, n := range names {
		for _, part := range parts(ix.Tensors[n]) {
			st, err := os.Stat(part.File)
			if err != nil {
				return nil, fmt.Errorf("weights: %v", err)
			}
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00%d\x00", part.File, st.Size(), st.ModTime().UnixNano(), part.Offset, part.Length)
		}
		total = (total + 63) / 64 * 64
		offs[n] = total
		total += ix.Tensors[n].Length
	}
	file := filepath.Join(abs, prefix+"-"+hex.EncodeToString(h.Sum(nil))[:32]+".packed")
	for _, n := range names {
		info := out.Tensors[n]
		info.File, info.Offset = file, offs[n]
		out.Tensors[n] = info
	}
	if st, err := os.Stat(file); err == nil && st.Size() == total {
		if progress != nil {
			progress(total, total)
		}
		return out, nil
	}
	label := "weights: " + ix.Source
	err = WriteCacheFile(label, abs, file, func(tmp *os.File) error {
		var done int64
		for _, n := range names {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s: %s: %w", label, what, err)
			}
			b, err := data(ix.Tensors[n])
			if err != nil {
				return fmt.Errorf("%s: tensor %q: %v", label, n, err)
			}
			if int64(len(b)) != ix.Tensors[n].Length {
				return fmt.Errorf("%s: tensor %q: internal error: packed %d bytes, planned %d", label, n, len(b), ix.Tensors[n].Length)
			}
			if _, err := tmp.WriteAt(b, offs[n]); err != nil {
				return fmt.Errorf("%s: writing cache file %s: %v", label, tmp.Name(), err)
			}
			done += int64(len(b))
			if progress != nil {
				progress(done, total)
			}
		}
		if err := tmp.Truncate(total); err != nil {
			return fmt.Errorf("%s: writing cache file %s: %v", label, tmp.Name(), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
