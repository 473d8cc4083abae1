package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// phaseReporter shows slow phases (compile, load) on stderr: a live spinner
// with elapsed time on a terminal, a start and an end line otherwise.
func phaseReporter(w io.Writer, quiet bool) func(string) func() {
	return func(name string) func() {
		if quiet {
			return func() {}
		}
		start := time.Now()
		if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
			fmt.Fprintf(w, "%s...\n", name)
			return func() { fmt.Fprintf(w, "%s done in %.1fs\n", name, time.Since(start).Seconds()) }
		}
		bar := progressbar.NewOptions(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(name),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
		)
		stop := make(chan struct{})
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					bar.Add(1)
				}
			}
		}()
		return func() {
			close(stop)
			<-finished
			bar.Finish()
			fmt.Fprintf(w, "%s done in %.1fs\n", name, time.Since(start).Seconds())
		}
	}
}
