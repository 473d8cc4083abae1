package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/archc/archc/dsl"
)

// fmtCmd is `archc fmt`: gofmt for .arch files (dsl.Format).
type fmtCmd struct {
	Write bool     `short:"w" help:"Write the result back to each file whose layout differs, instead of printing it."`
	List  bool     `short:"l" help:"Print the names of the files whose layout differs, instead of their text."`
	Paths []string `arg:"" name:"path" help:".arch files, or folders whose .arch files to format." type:"existingpath"`
}

func (c *fmtCmd) Run() error {
	files, err := archFiles(c.Paths)
	if err != nil {
		return err
	}
	failed := false
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		out, err := dsl.Format(f, src)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		same := bytes.Equal(src, out)
		if c.List && !same {
			fmt.Println(f)
		}
		if c.Write && !same {
			st, err := os.Stat(f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(f, out, st.Mode().Perm()); err != nil {
				return err
			}
		}
		if !c.List && !c.Write {
			if _, err := os.Stdout.Write(out); err != nil {
				return err
			}
		}
	}
	if failed {
		return fmt.Errorf("fmt failed")
	}
	return nil
}

// archFiles expands folders to the .arch files they hold (sorted); files
// are kept as given.
func archFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.arch"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no .arch files", p)
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}
