//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package ireetool

import "context"

// lockKey is a no-op where flock is missing: two processes compiling the
// same module at once both run iree-compile (the rename keeps the cache
// consistent).
func lockKey(context.Context, string) (func(), error) { return func() {}, nil }
