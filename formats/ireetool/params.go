package ireetool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Param names a weight stored in a file region. IREE sees it as the named
// parameter "model"::Name (MLIR: #flow.parameter.named<"model"::"Name">).
type Param struct {
	Name   string // parameter key, e.g. "model.embed_tokens.weight"
	File   string // path of the file holding the bytes
	Offset int64  // byte offset of the data in File
	Length int64  // data length in bytes
}

// CheckParams validates params and returns them with absolute file paths.
// Errors: an empty or repeated name, a missing file, a region outside its
// file.
func CheckParams(params []Param) ([]Param, error) {
	sizes := map[string]int64{}
	seen := map[string]bool{}
	out := make([]Param, 0, len(params))
	for _, p := range params {
		if p.Name == "" {
			return nil, fmt.Errorf("iree: a parameter from %s has an empty name: name every parameter", p.File)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("iree: parameter %q is given twice: pass each name once", p.Name)
		}
		seen[p.Name] = true
		file, err := filepath.Abs(p.File)
		if err != nil {
			return nil, fmt.Errorf("iree: parameter %q: bad file %q: %v", p.Name, p.File, err)
		}
		size, ok := sizes[file]
		if !ok {
			st, err := os.Stat(file)
			if err != nil {
				return nil, fmt.Errorf("iree: parameter %q: %v", p.Name, err)
			}
			size = st.Size()
			sizes[file] = size
		}
		if p.Offset < 0 || p.Length < 0 || p.Offset > size-p.Length {
			return nil, fmt.Errorf("iree: parameter %q: bytes [%d,%d) lie outside %s (%d bytes): fix the offset/length", p.Name, p.Offset, p.Offset+p.Length, file, size)
		}
		out = append(out, Param{Name: p.Name, File: file, Offset: p.Offset, Length: p.Length})
	}
	return out, nil
}

// archiveScript writes the regions named on stdin ([{name, file, offset,
// length}]) as an IREE parameter archive at argv[1], with iree.runtime's
// ParameterIndex (the files are mapped, not read into Python).
const archiveScript = `
import json, mmap, os, sys
import iree.runtime as rt
index, handles, keep = rt.ParameterIndex(), {}, []
for p in json.load(sys.stdin):
    if p["file"] not in handles:
        fd = os.open(p["file"], os.O_RDONLY)
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        keep.append((fd, mm))
        handles[p["file"]] = rt.FileHandle.wrap_memory(mm, readable=True, writable=False)
    index.add_from_file_handle(p["name"], handles[p["file"]], p["length"], offset=p["offset"])
index.create_archive_file(sys.argv[1])
`

// WriteParameterArchive writes params as an IREE parameter archive at
// path: the file iree-run-module and iree-benchmark-module load with
// --parameters=model=path. It runs one short Python process of the venv.
// Errors: invalid params (CheckParams), no venv, the write failing (with
// Python's last lines).
func WriteParameterArchive(ctx context.Context, params []Param, path string) error {
	checked, err := CheckParams(params)
	if err != nil {
		return err
	}
	py, err := FindPython()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("iree: bad archive path %q: %v", path, err)
	}
	type entry struct {
		Name   string `json:"name"`
		File   string `json:"file"`
		Offset int64  `json:"offset"`
		Length int64  `json:"length"`
	}
	list := make([]entry, len(checked))
	for i, p := range checked {
		list[i] = entry{p.Name, p.File, p.Offset, p.Length}
	}
	in, _ := json.Marshal(list)
	cmd := exec.CommandContext(ctx, py, "-I", "-c", archiveScript, abs)
	cmd.Stdin = bytes.NewReader(in)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("iree: writing parameter archive %s: %v: %s", abs, err, LastLines(string(out), 2, "no output"))
	}
	return nil
}
