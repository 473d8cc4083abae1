// Package iree runs compiled IREE modules through a long-lived Python
// worker that uses the official iree.runtime module (no published IREE
// package exports the runtime's C API), from the venv package ireetool
// finds: load a module with its parameters, call its functions, choose
// tokens on the logits buffer, with each sequence's sampling state (the
// tokens its penalties read) kept in the worker from StartSeq to EndSeq.
// Every message is declared once, in protocol.json (versioned; both sides
// check what they receive against it).
package iree

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/archc/archc/formats/ireetool"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/archc/archc/formats/tensor"
)

//go:embed worker.py
var workerPy string

// grammarPy is worker.py's logit_bias and grammar-mask module (its
// processors for Sampling.LogitBias and Sampling.Grammar), passed to it as
// its second argument.
//
//go:embed grammar.py
var grammarPy string

// Devices lists the IREE HAL devices Load accepts (every device of
// ireetool.Targets); "" means the first, local-task.
var Devices = ireetool.Devices()

// Options configures Start.
type Options struct {
	// Python is the interpreter to run; "" means ireetool.FindPython().
	Python string
	// Stderr, if set, also receives the worker's stderr as it is written
	// (the last 16 KiB are kept for error messages either way).
	Stderr io.Writer

	// script replaces the embedded worker.py (tests only).
	script string
}

// Worker is a running IREE worker process. Its methods are safe for
// concurrent use; requests are served one at a time. Once the process dies
// or a request is cancelled, the worker is broken: every later call returns
// the error that broke it, and the caller should Close it and Start another.
type Worker struct {
	// IREEVersion is the iree.runtime version the worker reported, e.g.
	// "3.13.0rc20261016".
	IREEVersion string
	// IREERevision is the IREE git revision of that runtime ("" if the
	// runtime does not say).
	IREERevision string

	cmd        *exec.Cmd
	stdin      io.WriteCloser
	stdoutFile *os.File
	stdout     *bufio.Reader
	stderr     *tailBuffer
	exited     chan struct{} // closed once cmd.Wait returned; waitErr is then set
	waitErr    error

	mu        sync.Mutex
	broken    error
	functions []string
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// maxHeader bounds a response header; a bigger one means a corrupt stream.
const maxHeader = 64 << 20

// Start launches a worker process and waits (bounded by ctx) until it has
// imported iree.runtime. ctx governs only the start-up; the process lives
// until Close. Errors: the interpreter is not found (ErrNotFound), cannot be
// executed, or exits during start-up (the error carries its exit status and
// the tail of its stderr).
func Start(ctx context.Context, opts Options) (*Worker, error) {
	py := opts.Python
	if py == "" {
		var err error
		if py, err = ireetool.FindPython(); err != nil {
			return nil, err
		}
	}
	if _, err := protocol(); err != nil {
		return nil, err
	}
	script := workerPy
	if opts.script != "" {
		script = opts.script
	}
	// -I: ignore PYTHON* env vars and the cwd, so nothing shadows iree.
	// The protocol declaration is the worker's first argument, its
	// logit_bias and grammar module (grammar.py) the second.
	cmd := exec.Command(py, "-I", "-c", script, string(protocolJSON), grammarPy)
	// A process group of its own: a terminal's Ctrl-C reaches the Go
	// program, which stops the worker in order, not the worker directly.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w := &Worker{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(w.stderr, opts.Stderr)
	} else {
		cmd.Stderr = w.stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("iree worker: %v", err)
	}
	// Our own pipe rather than cmd.StdoutPipe: Wait closes the latter as
	// soon as the process exits, which could drop its last response.
	stdout, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("iree worker: %v", err)
	}
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close() // the child holds its own copy
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("iree worker: cannot run %s (%v): run scripts/setup.sh or set ARCHC_VENV", py, err)
	}
	w.stdin, w.stdoutFile, w.stdout = stdin, stdout, bufio.NewReaderSize(stdout, 1<<20)
	go func() {
		w.waitErr = cmd.Wait()
		close(w.exited)
	}()

	var hello helloResp
	_, err = w.roundtrip(ctx, "start", "hello", nil, nil, &hello)
	if err != nil {
		w.kill()
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	w.IREEVersion, w.IREERevision = hello.IREE, hello.Revision
	return w, nil
}

// Load loads the compiled module vmfbPath on device ("local-task" if "",
// "local-sync", "cuda", "hip" or "vulkan": one that runs the module's
// target), with params registered as named parameters in scope
// "model". Parameter files are memory-mapped by the worker, never read
// into Python; IREE imports a region without copying when its Offset is a
// multiple of 64 and copies it into process memory otherwise. IREE checks
// that a region is at least as long as the global it feeds, not that it is
// exactly as long: check shapes before (weights.Index.Lookup does).
// Module globals (e.g. a KV cache) then live until Close. A worker loads one
// module. Errors: bad arguments (missing files, a region past the end of its
// file, duplicate names, unknown device) are reported before anything is
// sent; a GPU driver that does not start (no driver library, no GPU) is one
// line naming what was looked for (ireetool.Target.Library); IREE failures
// (version mismatch, a parameter the module needs that is missing) come
// back with IREE's message.
func (w *Worker) Load(ctx context.Context, vmfbPath string, params []ireetool.Param, device string) error {
	return w.LoadWith(ctx, vmfbPath, params, RuntimeOptions{Device: device})
}

// RuntimeOptions selects the IREE device a module runs on and how.
type RuntimeOptions struct {
	// Device is the HAL device: "local-task" (a thread pool; default),
	// "local-sync" (the calling thread only), or a GPU's: "cuda", "hip",
	// "vulkan".
	Device string
	// Threads is the number of local-task worker threads; 0 lets IREE pick
	// (one per core it sees). Ignored by local-sync.
	Threads int
	// Extra are more iree.runtime flags, passed as given (for example
	// "--device_profiling_mode=host-execution" with
	// "--device_profiling_output=FILE" to profile dispatches; see
	// iree-profile).
	Extra []string
}

// WorkerStack is the stack of each local-task worker thread, bytes. IREE's
// default (128 KiB) is too small for the AMX kernels' chunk of split weight
// tiles (about 100 KiB of stack in one workgroup: driver/kernels,
// csrc/matmul_avx512.c).
const WorkerStack = 1 << 20

// Flags returns the iree.runtime flags that realise o.
func (o RuntimeOptions) Flags() []string {
	out := []string{fmt.Sprintf("--task_worker_stack_size=%d", WorkerStack)}
	if o.Threads > 0 {
		out = append(out, fmt.Sprintf("--task_topology_group_count=%d", o.Threads))
	}
	return append(out, o.Extra...)
}

// LoadWith is Load with runtime options (device, thread count). Errors as
// Load, plus a negative thread count.
func (w *Worker) LoadWith(ctx context.Context, vmfbPath string, params []ireetool.Param, ro RuntimeOptions) error {
	device := ro.Device
	if device == "" {
		device = Devices[0]
	}
	if ro.Threads < 0 {
		return fmt.Errorf("iree: %d threads: give a positive count, or 0 for one per core", ro.Threads)
	}
	for _, f := range ro.Extra {
		if !strings.HasPrefix(f, "--") {
			return fmt.Errorf("iree: runtime flag %q must start with -- (e.g. --task_worker_spin_us=100)", f)
		}
	}
	if !slices.Contains(Devices, device) {
		return fmt.Errorf("iree: unknown device %q: use one of %v", device, Devices)
	}
	target, _ := ireetool.LookupTarget(device)
	if ro.Threads > 0 && target.GPU {
		return fmt.Errorf("iree: %d threads: a thread count is for the local-task device, not %s", ro.Threads, device)
	}
	vmfb, err := filepath.Abs(vmfbPath)
	if err == nil {
		_, err = os.Stat(vmfb)
	}
	if err != nil {
		return fmt.Errorf("iree: cannot read module %s (%v): compile it first", vmfbPath, err)
	}
	ps, err := checkParams(params)
	if err != nil {
		return err
	}
	var resp loadResp
	if _, err := w.request(ctx, "Load", loadReq{Op: "load", VMFB: vmfb, Device: device, Params: ps, Flags: nonNil(ro.Flags())}, nil, &resp); err != nil {
		return deviceError(err, device, target)
	}
	w.mu.Lock()
	w.functions = resp.Functions
	w.mu.Unlock()
	return nil
}

// CheckDevice asks the worker whether this machine has device (one of
// Devices): its HAL driver starts and finds a device, which is released at
// once. It is asked before compiling for a GPU, so a machine without one
// is refused in a second rather than after the compile. The worker loads
// no module afterwards (runtime flags must precede its first device): use
// a worker of its own. Errors: an unknown device; a missing device, as
// LoadWith words it (what was looked for, IREE's reason).
func (w *Worker) CheckDevice(ctx context.Context, device string) error {
	if !slices.Contains(Devices, device) {
		return fmt.Errorf("iree: unknown device %q: use one of %v", device, Devices)
	}
	target, _ := ireetool.LookupTarget(device)
	var resp okResp
	if _, err := w.request(ctx, "CheckDevice", deviceReq{Op: "device", Device: device}, nil, &resp); err != nil {
		return deviceError(err, device, target)
	}
	return nil
}

// deviceError words a failed load or device request whose device could
// not be created (worker.py's noDevice) as what was looked for on the
// machine; other errors pass through.
func deviceError(err error, device string, target ireetool.Target) error {
	if msg, prefix := err.Error(), noDevice+" "+device+": "; target.GPU && strings.Contains(msg, prefix) {
		_, reason, _ := strings.Cut(msg, prefix)
		return fmt.Errorf("iree: device %s is not available on this machine: looked for %s (IREE: %s)", device, target.Library, reason)
	}
	return err
}

// noDevice is what worker.py says when a device's driver or the device
// itself cannot be created.
const noDevice = "no usable device"

// checkParams validates params (ireetool.CheckParams) in the worker's
// request form.
func checkParams(params []ireetool.Param) ([]paramJSON, error) {
	checked, err := ireetool.CheckParams(params)
	if err != nil {
		return nil, err
	}
	out := make([]paramJSON, len(checked))
	for i, p := range checked {
		out[i] = paramJSON{Name: p.Name, File: p.File, Offset: p.Offset, Length: p.Length}
	}
	return out, nil
}

// Pid returns the worker process's id (for diagnostics and tests).
func (w *Worker) Pid() int { return w.cmd.Process.Pid }

// Functions returns the names of the loaded module's exported functions
// (nil before Load).
func (w *Worker) Functions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.functions...)
}

// Call invokes the exported function fn with args (host tensors; rank 0
// allowed) and returns its results as host tensors. Errors raised by IREE
// (unknown function, wrong argument count, shape or dtype mismatch) come
// back with IREE's message and leave the worker usable. If ctx ends first
// the worker is killed and Call returns ctx's error; if the worker dies the
// error names its exit status and the tail of its stderr.
func (w *Worker) Call(ctx context.Context, fn string, args []tensor.Tensor) ([]tensor.Tensor, error) {
	return w.call(ctx, fn, args, false, nil)
}

// CallArgmax is Call for a function whose first result is logits [rows,
// vocab] f32: the worker replaces that result by its argmax over vocab,
// [rows] i32 (the lowest index on ties, as torch.argmax), so the logits
// never cross the pipe. Errors as Call, plus a first result of another
// shape or dtype.
func (w *Worker) CallArgmax(ctx context.Context, fn string, args []tensor.Tensor) ([]tensor.Tensor, error) {
	return w.call(ctx, fn, args, true, nil)
}

// CallSample is Call for a function whose first result is logits [rows,
// vocab] f32: the worker replaces that result by one token per row, [rows]
// i32, chosen by rows[i] (SampleRow, for a sequence StartSeq started), so
// the logits never cross the pipe. When a sequence asks for logprobs,
// three more results follow the ids (see Choices). Errors as CallArgmax,
// plus len(rows) differing from the logits' rows, a row of a sequence
// that was not started or has ended, a token id outside the vocabulary.
func (w *Worker) CallSample(ctx context.Context, fn string, args []tensor.Tensor, rows []SampleRow) ([]tensor.Tensor, error) {
	if rows == nil {
		rows = []SampleRow{}
	}
	return w.call(ctx, fn, args, false, rows)
}

// Sample chooses one token per row of logits [rows, vocab] f32 held by the
// caller (e.g. prefill's), as CallSample does; nil rows is argmax for
// every row. Errors: logits of another shape or dtype, len(rows) differing
// from the logits' rows, rows CallSample refuses, a dead worker.
func (w *Worker) Sample(ctx context.Context, logits tensor.Tensor, rows []SampleRow) ([]Choice, error) {
	if err := logits.Validate(); err != nil {
		return nil, fmt.Errorf("iree: Sample: %v", err)
	}
	if len(logits.Shape) != 2 {
		return nil, fmt.Errorf("iree: Sample: logits %v, want [rows, vocab]", logits.Shape)
	}
	if rows == nil { // argmax for every row
		rows = make([]SampleRow, logits.Shape[0])
	}
	req := sampleReq{Op: "sample", Rows: wireRows(rows), Args: []tensorJSON{{DType: logits.DType, Shape: logits.Shape, NBytes: int64(len(logits.Data))}}}
	var resp resultsResp
	outs, err := w.request(ctx, "Sample", req, [][]byte{logits.Data}, &resp)
	if err != nil {
		return nil, err
	}
	return Choices(results(resp.Results, outs), logits.Shape[0])
}

// Choice is the token the worker chose for one row, with its logprob and
// the most likely alternatives when they were asked for (SampleRow.Logprobs).
type Choice struct {
	ID       int32
	Logprob  float32   // log_softmax of the raw logits at ID (0 when not asked)
	TopIDs   []int32   // the most likely tokens, best first (nil when not asked)
	TopProbs []float32 // their logprobs
}

// Choices reads the results of CallSample, CallArgmax or Sample for rows
// rows: ids [rows] i32, then optionally chosen logprobs [rows] f32, top
// ids [rows, k] i32 and top logprobs [rows, k] f32. Errors: any other
// layout.
func Choices(res []tensor.Tensor, rows int64) ([]Choice, error) {
	if len(res) != 1 && len(res) != 4 {
		return nil, fmt.Errorf("iree: the worker returned %d results for a token choice, want 1 or 4", len(res))
	}
	ids, err := res[0].I32()
	if err != nil || int64(len(ids)) != rows {
		return nil, fmt.Errorf("iree: the worker returned %v token ids for %d rows (%v)", res[0], rows, err)
	}
	out := make([]Choice, rows)
	for i := range out {
		out[i].ID = ids[i]
	}
	if len(res) == 1 {
		return out, nil
	}
	lp, err1 := res[1].F32()
	top, err2 := res[2].I32()
	topLP, err3 := res[3].F32()
	if err := errors.Join(err1, err2, err3); err != nil || len(res[2].Shape) != 2 || int64(len(lp)) != rows || len(top) != len(topLP) {
		return nil, fmt.Errorf("iree: malformed logprob results %v %v %v (%v)", res[1], res[2], res[3], err)
	}
	k := int(res[2].Shape[1])
	for i := range out {
		out[i].Logprob = lp[i]
		out[i].TopIDs = top[i*k : (i+1)*k]
		out[i].TopProbs = topLP[i*k : (i+1)*k]
	}
	return out, nil
}

// call sends a call request: with argmax or rows, the worker replaces the
// first result by its token choice.
func (w *Worker) call(ctx context.Context, fn string, args []tensor.Tensor, argmax bool, rows []SampleRow) ([]tensor.Tensor, error) {
	descs := make([]tensorJSON, len(args))
	payloads := make([][]byte, len(args))
	for i, a := range args {
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("iree: Call(%q) argument %d: %v", fn, i, err)
		}
		descs[i] = tensorJSON{DType: a.DType, Shape: nonNil(a.Shape), NBytes: int64(len(a.Data))}
		payloads[i] = a.Data
	}
	var resp resultsResp
	outs, err := w.request(ctx, fmt.Sprintf("Call(%q)", fn), callReq{Op: "call", Fn: fn, Args: descs, Argmax: argmax, Rows: wireRows(rows)}, payloads, &resp)
	if err != nil {
		return nil, err
	}
	return results(resp.Results, outs), nil
}

// results pairs result descriptors with their payloads.
func results(descs []tensorJSON, outs [][]byte) []tensor.Tensor {
	res := make([]tensor.Tensor, len(descs))
	for i, d := range descs {
		res[i] = tensor.Tensor{DType: d.DType, Shape: nonNil(d.Shape), Data: outs[i]}
	}
	return res
}

// Close asks the worker to release the module and exit, and kills it if it
// has not exited within 5 seconds, or at once if a request is in flight
// (that request then fails). It is safe to call more than once. It
// returns nil once the process is gone, whether it exited or was killed.
func (w *Worker) Close() error {
	if !w.mu.TryLock() {
		w.kill() // a request is in flight: end it rather than wait for it
		w.mu.Lock()
	}
	defer w.mu.Unlock()
	if w.broken == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		w.roundtrip(ctx, "Close", "close", []byte(`{"op": "close"}`), nil, &okResp{}) // best effort
		cancel()
		w.broken = errors.New("iree worker: closed: start a new worker")
	}
	w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(5 * time.Second):
		w.kill()
	}
	w.stdoutFile.Close()
	return nil
}

// request sends one request (req, one of the protocol's request types)
// under the lock, refusing if the worker is broken, decodes the response
// into resp and returns the payloads that follow it. A transport or
// protocol failure marks the worker broken; a response with ok=false
// becomes an error and leaves the worker usable.
func (w *Worker) request(ctx context.Context, what string, req any, payloads [][]byte, resp any) ([][]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return nil, w.broken
	}
	if err := context.Cause(ctx); err != nil { // nothing sent yet: no need to kill
		return nil, fmt.Errorf("iree: %s not started: %v", what, err)
	}
	msg, err := json.Marshal(req)
	if err != nil { // e.g. a NaN: nothing was sent, the worker is fine
		return nil, fmt.Errorf("iree: %s: cannot encode the request: %v", what, err)
	}
	outs, err := w.roundtrip(ctx, what, opOf(req), msg, payloads, resp)
	var failed *workerError
	if errors.As(err, &failed) {
		return nil, &RequestError{What: what, Msg: failed.msg}
	}
	if err != nil {
		w.broken = err
		return nil, err
	}
	return outs, nil
}

// workerError is a response with ok=false: the request failed, the worker
// is fine.
type workerError struct{ msg string }

// RequestError is the worker's refusal of one request (a response with
// ok=false): that request failed, and the worker is fine and keeps its
// state — for example a grammar llguidance cannot build, refused at
// seq_start. Other errors of a Worker's methods mean it is dead or out of
// step. What names the call ("StartSeq(3)"), Msg is the worker's message.
type RequestError struct{ What, Msg string }

func (e *RequestError) Error() string { return "iree: " + e.What + ": " + e.Msg }

func (e *workerError) Error() string { return e.msg }

// opOf returns the op of a request message.
func opOf(req any) string {
	switch r := req.(type) {
	case loadReq:
		return r.Op
	case callReq:
		return r.Op
	case sampleReq:
		return r.Op
	case seqStartReq:
		return r.Op
	case seqEndReq:
		return r.Op
	case deviceReq:
		return r.Op
	case closeReq:
		return r.Op
	case map[string]any: // raw messages (tests)
		op, _ := r["op"].(string)
		return op
	}
	return fmt.Sprintf("%T", req)
}

// roundtrip writes the encoded request msg (if not nil) and payloads, then
// reads the response to op into resp, in a goroutine so that ctx can
// interrupt it by killing the process.
func (w *Worker) roundtrip(ctx context.Context, what, op string, msg []byte, payloads [][]byte, resp any) ([][]byte, error) {
	type result struct {
		outs [][]byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if msg != nil {
			r.err = w.send(msg, payloads)
		}
		if r.err == nil {
			r.outs, r.err = w.receive(op, resp)
		}
		done <- r
	}()
	select {
	case r := <-done:
		var failed *workerError
		var proto *protocolError
		switch {
		case errors.As(r.err, &failed):
			return nil, r.err
		case errors.As(r.err, &proto):
			w.kill() // out of step: nothing it sends can be trusted
			return nil, fmt.Errorf("iree worker: %s: %v: the worker was killed, start a new one", what, r.err)
		case r.err != nil:
			return nil, w.deathError(what, r.err)
		}
		return r.outs, nil
	case <-ctx.Done():
		w.kill()
		<-done // the pipes close with the process, so this returns
		return nil, fmt.Errorf("iree worker: killed during %s because the context ended (%v): start a new worker", what, context.Cause(ctx))
	}
}

// protocolError is a response that breaks the protocol (protocol.json):
// the worker is out of step with this package.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "protocol error: " + e.msg }

func (w *Worker) send(b []byte, payloads [][]byte) error {
	msg := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	if _, err := w.stdin.Write(append(msg, b...)); err != nil {
		return err
	}
	for _, p := range payloads {
		if _, err := w.stdin.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// receive reads one response: its header, checked against protocol.json's
// entry for op (or for "error" when ok is false) and decoded into resp,
// then the payloads of the results it lists. The hello is checked for the
// protocol version first, so that a worker of another version gets an
// error naming both versions rather than one about a field.
func (w *Worker) receive(op string, resp any) ([][]byte, error) {
	proto, err := protocol()
	if err != nil {
		return nil, err
	}
	var lenBuf [4]byte
	if _, err := io.ReadFull(w.stdout, lenBuf[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(lenBuf[:])
	if n > maxHeader {
		return nil, &protocolError{fmt.Sprintf("%d-byte response header", n)}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(w.stdout, b); err != nil {
		return nil, err
	}
	var head struct {
		OK       *bool   `json:"ok"`
		Error    string  `json:"error"`
		Hello    *string `json:"hello"`
		Protocol *int    `json:"protocol"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &protocolError{fmt.Sprintf("bad response header to %s: %v", op, err)}
	}
	if op == "hello" {
		if head.Hello == nil || *head.Hello != "archc-iree-worker" {
			return nil, &protocolError{"the process did not greet as the archc IREE worker: check that the interpreter is a Python 3 with iree.runtime"}
		}
		theirs := 1 // protocol 1 had no version in its hello
		if head.Protocol != nil {
			theirs = *head.Protocol
		}
		if theirs != proto.Version {
			return nil, &protocolError{fmt.Sprintf("the IREE worker speaks protocol %d, this archc speaks protocol %d: the worker script must come from the same archc build (rt/iree/worker.py and protocol.json)", theirs, proto.Version)}
		}
	}
	fields := proto.Responses[op]
	if head.OK != nil && !*head.OK {
		fields = proto.Responses["error"]
	}
	if fields == nil {
		return nil, fmt.Errorf("iree: the protocol has no response to %q", op)
	}
	if head.OK != nil && !*head.OK {
		var e errorResp
		if err := proto.decodeChecked(b, fields, "error response to "+op, &e); err != nil {
			return nil, &protocolError{err.Error()}
		}
		return nil, &workerError{e.Error}
	}
	if err := proto.decodeChecked(b, fields, "response to "+op, resp); err != nil {
		return nil, &protocolError{err.Error()}
	}
	r, ok := resp.(*resultsResp)
	if !ok {
		return nil, nil
	}
	// The header is checked before any payload is allocated: dtype, shape
	// and byte count must agree, within maxPayload.
	for i, d := range r.Results {
		n, err := tensor.NumElements(d.Shape)
		if err != nil || !d.DType.Valid() || d.NBytes < 0 || d.NBytes > maxPayload || n*int64(d.DType.Size()) != d.NBytes {
			return nil, &protocolError{fmt.Sprintf("result %d is %s%v with %d bytes", i, d.DType, d.Shape, d.NBytes)}
		}
	}
	outs := make([][]byte, len(r.Results))
	for i, d := range r.Results {
		outs[i] = make([]byte, d.NBytes)
		if _, err := io.ReadFull(w.stdout, outs[i]); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// maxPayload bounds one result the worker sends (4 GiB).
const maxPayload = 4 << 30

// deathError turns a transport error into one naming how the process ended.
func (w *Worker) deathError(what string, err error) error {
	select {
	case <-w.exited:
	case <-time.After(3 * time.Second):
		w.kill() // alive but talking nonsense
		return fmt.Errorf("iree worker: %s: %v; stderr: %s: the worker was killed, start a new one", what, err, ireetool.LastLines(w.stderr.String(), 5, "(empty)"))
	}
	status := "exit status 0"
	if w.waitErr != nil {
		status = w.waitErr.Error()
	}
	return fmt.Errorf("iree worker exited unexpectedly during %s (%s); stderr: %s: fix the cause and start a new worker", what, status, ireetool.LastLines(w.stderr.String(), 5, "(empty)"))
}

// kill ends the process (if still running) and waits for it to be reaped.
func (w *Worker) kill() {
	select {
	case <-w.exited:
		return
	default:
	}
	w.cmd.Process.Kill()
	<-w.exited
}
