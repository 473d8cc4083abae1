package rt

import (
	"context"
	"fmt"
	"strings"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/rt/iree"
)

// CheckDevice says whether this machine has the IREE device ("" is
// local-task) a model is about to be compiled for and run on. A CPU device
// is always there. A GPU is asked of a short-lived IREE worker
// (iree.Worker.CheckDevice: its HAL driver starts and finds a device), so
// that a machine without one is refused before a compile of minutes
// (launch.Open asks first). Errors: an unknown device (naming the known
// ones); a missing GPU, naming what was looked for; the worker not
// starting.
func CheckDevice(ctx context.Context, device string) error {
	t, err := ireetool.LookupTarget(device)
	if err != nil {
		return fmt.Errorf("device %q: use one of %s", device, strings.Join(ireetool.Devices(), ", "))
	}
	if !t.GPU {
		return nil
	}
	w, err := iree.Start(ctx, iree.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	return w.CheckDevice(ctx, device)
}
