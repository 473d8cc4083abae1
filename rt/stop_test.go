package rt

import (
	"strings"
	"testing"
)

func TestStopStrings(t *testing.T) {
	for _, c := range []struct {
		name    string
		stops   []string
		pieces  []string
		sent    []string // what push returns for each piece
		stopped bool
		flush   string
	}{
		{"no stops", nil, []string{"ab", "c"}, []string{"ab", "c"}, false, ""},
		{"whole stop in one piece", []string{"END"}, []string{"abENDcd"}, []string{"ab"}, true, ""},
		// "E" and "EN" might start "END": held back, then released when "x" decides.
		{"partial match released", []string{"END"}, []string{"abE", "N", "x"}, []string{"ab", "", "ENx"}, false, ""},
		{"match across three pieces", []string{"END"}, []string{"abE", "N", "Dzz"}, []string{"ab", "", ""}, true, ""},
		{"earliest of two stops", []string{"xyz", "b"}, []string{"axyzb"}, []string{"a"}, true, ""},
		{"held text flushed at the end", []string{"END"}, []string{"abEN"}, []string{"ab"}, false, "EN"},
		{"after the stop nothing", []string{"."}, []string{"a.", "more"}, []string{"a", ""}, true, ""},
		{"multi-byte", []string{"é!"}, []string{"café", "!"}, []string{"caf", ""}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &StopStrings{Stops: c.stops}
			var sent []string
			stopped := false
			for _, p := range c.pieces {
				out, st := s.Push(p)
				sent = append(sent, out)
				stopped = st
			}
			if strings.Join(sent, "|") != strings.Join(c.sent, "|") || stopped != c.stopped {
				t.Errorf("sent %q stopped %v, want %q %v", sent, stopped, c.sent, c.stopped)
			}
			if f := s.Flush(); f != c.flush {
				t.Errorf("flush %q, want %q", f, c.flush)
			}
		})
	}
}
