package weights

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteCacheFile creates the cache file out in folder dir atomically: write
// fills a temporary file in dir, which is synced and renamed to out, so a
// reader never sees a partial file and an interrupted run leaves none
// behind. Errors of write are returned as they are; file-system errors
// start with label (e.g. "gguf: model.gguf") and name the file.
func WriteCacheFile(label, dir, out string, write func(tmp *os.File) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: creating cache folder: %v", label, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(out)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: creating cache file in %s: %v", label, dir, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: writing cache file %s: %v", label, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: writing cache file %s: %v", label, tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("%s: installing cache file %s: %v", label, out, err)
	}
	ok = true
	return nil
}
