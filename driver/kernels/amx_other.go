//go:build !(linux && amd64)

package kernels

// amxPermitted is false off Linux x86-64: the AMX variant needs Linux's
// arch_prctl permission.
func amxPermitted() bool { return false }
