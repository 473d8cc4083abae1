package kernels

import "golang.org/x/sys/unix"

// amxPermitted asks Linux for this process's permission to use AMX tile
// data (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), which every
// process that runs an AMX instruction needs first (the IREE worker asks for
// its own at start); false when the kernel refuses (older than 5.16, or the
// hypervisor hides the state).
func amxPermitted() bool {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := unix.Syscall(unix.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}
