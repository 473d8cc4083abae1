//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ireetool

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockKey takes an exclusive lock on path (created if missing) that other
// processes see too, polling until ctx ends; unlock releases it. Compile
// holds it around one cache key's compile, so two test processes (or two
// goroutines) asking for the same module at once run iree-compile once:
// the second finds the first's module when it gets the lock.
func lockKey(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, context.Cause(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
