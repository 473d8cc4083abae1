package tokenizer

import (
	"errors"
	"io/fs"
	"sort"
	"strings"
)

// sortAdded orders added tokens longest first, so the first prefix match at
// a position is the longest.
func (t *Tokenizer) sortAdded() {
	a := t.added
	sort.SliceStable(a, func(i, j int) bool { return len(a[i].content) > len(a[j].content) })
	for i := range t.first {
		t.first[i] = nil
	}
	for k, x := range a {
		t.first[x.content[0]] = append(t.first[x.content[0]], k)
	}
}

func sortStrings(s []string) { sort.Strings(s) }

// oneLine flattens an error message to one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// unwrapPathErr drops the path an *fs.PathError repeats.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
