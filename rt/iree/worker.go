// Package iree runs compiled IREE modules through a long-lived Python
// worker that uses the official iree.runtime module (no published IREE
// package exports the runtime's C API), from the venv package ireetool
// finds: load a module with its parameters, call its functions, choose
// tokens on the logits buffer.
package iree

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/archc/archc/rt/ireetool"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/archc/archc/rt/tensor"
)

//go:embed worker.py
var workerPy string

// grammarPy is worker.py's logit_bias and grammar-mask module, passed to
// it as its first argument (see grammar.py).
//
//go:embed grammar.py
var grammarPy string

// Devices lists the IREE HAL devices Load accepts; "" means the first.
var Devices = []string{"local-task", "local-sync"}

// Options configures Start.
type Options struct {
	// Python is the interpreter to run; "" means ireetool.FindPython().
	Python string
	// Stderr, if set, also receives the worker's stderr as it is written
	// (the last 16 KiB are kept for error messages either way).
	Stderr io.Writer
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

// header is the JSON part of a protocol message (both directions).
type header struct {
	Op     string       `json:"op,omitempty"`
	OK     bool         `json:"ok,omitempty"`
	Error  string       `json:"error,omitempty"`
	Hello  string       `json:"hello,omitempty"`
	IREE   string       `json:"iree,omitempty"`
	Rev    string       `json:"revision,omitempty"`
	Flags  []string     `json:"flags,omitempty"`
	Argmax bool         `json:"argmax,omitempty"`
	Sample []SampleRow  `json:"sample,omitempty"`
	VMFB   string       `json:"vmfb,omitempty"`
	Device string       `json:"device,omitempty"`
	Params []paramJSON  `json:"params,omitempty"`
	Fn     string       `json:"fn,omitempty"`
	Args   []tensorJSON `json:"args,omitempty"`
	Result []tensorJSON `json:"results,omitempty"`
	Funcs  []string     `json:"functions,omitempty"`
}

type paramJSON struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
}

type tensorJSON struct {
	DType  tensor.DType `json:"dtype"`
	Shape  []int64      `json:"shape"`
	NBytes int64        `json:"nbytes"`
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
	// -I: ignore PYTHON* env vars and the cwd, so nothing shadows iree.
	cmd := exec.Command(py, "-I", "-c", workerPy, grammarPy)
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

	resp, _, err := w.roundtrip(ctx, "start", nil, nil)
	if err == nil && resp.Hello != "archc-iree-worker" {
		err = fmt.Errorf("iree worker: %s did not greet as the archc worker: check that it is a Python 3 interpreter", py)
	}
	if err != nil {
		w.kill()
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	w.IREEVersion, w.IREERevision = resp.IREE, resp.Rev
	return w, nil
}

// Load loads the compiled module vmfbPath on device ("local-task" if "",
// or "local-sync"), with params registered as named parameters in scope
// "model". Parameter files are memory-mapped by the worker, never read
// into Python; IREE imports a region without copying when its Offset is a
// multiple of 64 and copies it into process memory otherwise. IREE checks
// that a region is at least as long as the global it feeds, not that it is
// exactly as long: check shapes before (weights.Index.Lookup does).
// Module globals (e.g. a KV cache) then live until Close. A worker loads one
// module. Errors: bad arguments (missing files, a region past the end of its
// file, duplicate names, unknown device) are reported before anything is
// sent; IREE failures (version mismatch, a parameter the module needs that
// is missing) come back with IREE's message.
func (w *Worker) Load(ctx context.Context, vmfbPath string, params []ireetool.Param, device string) error {
	return w.LoadWith(ctx, vmfbPath, params, RuntimeOptions{Device: device})
}

// RuntimeOptions selects the IREE device a module runs on and how.
type RuntimeOptions struct {
	// Device is the HAL device: "local-task" (a thread pool; default) or
	// "local-sync" (the calling thread only).
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

// Flags returns the iree.runtime flags that realise o.
func (o RuntimeOptions) Flags() []string {
	var out []string
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
	resp, _, err := w.request(ctx, "Load", header{Op: "load", VMFB: vmfb, Device: device, Params: ps, Flags: ro.Flags()}, nil)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.functions = resp.Funcs
	w.mu.Unlock()
	return nil
}

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
	return w.call(ctx, fn, args, header{})
}

// CallArgmax is Call for a function whose first result is logits [rows,
// vocab] f32: the worker replaces that result by its argmax over vocab,
// [rows] i32 (the lowest index on ties, as torch.argmax), so the logits
// never cross the pipe. Errors as Call, plus a first result of another
// shape or dtype.
func (w *Worker) CallArgmax(ctx context.Context, fn string, args []tensor.Tensor) ([]tensor.Tensor, error) {
	return w.call(ctx, fn, args, header{Argmax: true})
}

// SampleRow chooses one token from one row of logits, in the worker. The
// warpers follow Hugging Face generate's LogitsProcessor definitions and
// order (transformers generation/logits_process.py): temperature, top-k
// (keep logits >= the k-th largest), top-p (drop the least likely tokens
// whose cumulative probability is <= 1 - top_p, always keeping the top
// one), min-p (drop probability < min_p × the top probability); then the
// token whose interval of the cumulative distribution (in id order) holds
// U. Temperature 0 is argmax (the lowest id on ties).
//
// Penalties come first, on the raw logits, in this order (worker.py
// penalize): RepetitionPenalty (transformers' RepetitionPenaltyLogitsProcessor,
// over every token of Context), FrequencyPenalty and PresencePenalty
// (OpenAI's definitions, over the last Generated tokens of Context), DRY
// (p-e-w's definition as text-generation-webui's DRYLogitsProcessor). They
// apply to argmax rows too.
type SampleRow struct {
	Temperature float64 `json:"temperature"`     // > 0 divides the logits; 0 = argmax
	TopK        int     `json:"top_k,omitempty"` // 0 = off
	TopP        float64 `json:"top_p,omitempty"` // 0 or 1 = off
	MinP        float64 `json:"min_p,omitempty"` // 0 = off
	U           float64 `json:"u"`               // uniform draw in [0, 1), from the caller's seeded stream

	RepetitionPenalty float64 `json:"repetition_penalty,omitempty"` // > 0; 1 or 0 = off
	FrequencyPenalty  float64 `json:"frequency_penalty,omitempty"`  // subtracted once per occurrence
	PresencePenalty   float64 `json:"presence_penalty,omitempty"`   // subtracted once if present
	DRYMultiplier     float64 `json:"dry_multiplier,omitempty"`     // 0 = DRY off
	DRYBase           float64 `json:"dry_base,omitempty"`           // default 1.75
	DRYAllowedLength  int     `json:"dry_allowed_length,omitempty"` // default 2
	DRYRange          int     `json:"dry_range,omitempty"`          // tokens looked back; 0 = all
	DRYBreakers       []int32 `json:"dry_breakers,omitempty"`       // token ids that end a repeated sequence
	Context           []int32 `json:"context,omitempty"`            // the sequence so far, for penalties
	Generated         int     `json:"generated,omitempty"`          // how many of Context's last tokens were generated
	// Logprobs, when set, asks for the chosen token's logprob (log_softmax
	// of the raw logits) and the *Logprobs most likely tokens'.
	Logprobs *int `json:"logprobs,omitempty"`
	// LogitBias and Grammar come before the penalties (grammar.go).
	LogitBias map[int32]float64 `json:"logit_bias,omitempty"`
	Grammar   *GrammarRow       `json:"grammar,omitempty"`
}

// CallSample is Call for a function whose first result is logits [rows,
// vocab] f32: the worker replaces that result by one token per row, [rows]
// i32, chosen by rows[i] (SampleRow), so the logits never cross the pipe.
// Errors as CallArgmax, plus len(rows) differing from the logits' rows.
func (w *Worker) CallSample(ctx context.Context, fn string, args []tensor.Tensor, rows []SampleRow) ([]tensor.Tensor, error) {
	return w.call(ctx, fn, args, header{Sample: rows})
}

// Sample chooses one token per row of logits [rows, vocab] f32 held by the
// caller (e.g. prefill's), with the worker's SampleRow code. Errors:
// logits of another shape or dtype, len(rows) differing from the logits'
// rows, a dead worker.
func (w *Worker) Sample(ctx context.Context, logits tensor.Tensor, rows []SampleRow) ([]Choice, error) {
	if err := logits.Validate(); err != nil {
		return nil, fmt.Errorf("iree: Sample: %v", err)
	}
	h := header{Op: "sample", Sample: rows, Args: []tensorJSON{{DType: logits.DType, Shape: logits.Shape, NBytes: int64(len(logits.Data))}}}
	resp, outs, err := w.request(ctx, "Sample", h, [][]byte{logits.Data})
	if err != nil {
		return nil, err
	}
	res := make([]tensor.Tensor, len(resp.Result))
	for i, d := range resp.Result {
		res[i] = tensor.Tensor{DType: d.DType, Shape: d.Shape, Data: outs[i]}
	}
	return Choices(res, logits.Shape[0])
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

// call sends a call request; opts carries the argmax or sampling choice.
func (w *Worker) call(ctx context.Context, fn string, args []tensor.Tensor, opts header) ([]tensor.Tensor, error) {
	descs := make([]tensorJSON, len(args))
	payloads := make([][]byte, len(args))
	for i, a := range args {
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("iree: Call(%q) argument %d: %v", fn, i, err)
		}
		descs[i] = tensorJSON{DType: a.DType, Shape: append([]int64{}, a.Shape...), NBytes: int64(len(a.Data))}
		payloads[i] = a.Data
	}
	resp, outs, err := w.request(ctx, fmt.Sprintf("Call(%q)", fn), header{Op: "call", Fn: fn, Args: descs, Argmax: opts.Argmax, Sample: opts.Sample}, payloads)
	if err != nil {
		return nil, err
	}
	res := make([]tensor.Tensor, len(resp.Result))
	for i, d := range resp.Result {
		res[i] = tensor.Tensor{DType: d.DType, Shape: d.Shape, Data: outs[i]}
		if res[i].Shape == nil {
			res[i].Shape = []int64{}
		}
	}
	return res, nil
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
		w.roundtrip(ctx, "Close", &header{Op: "close"}, nil) // best effort
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

// request sends one request under the lock, refusing if the worker is
// broken, and marks it broken on transport failure. A response with
// ok=false becomes an error and leaves the worker usable.
func (w *Worker) request(ctx context.Context, what string, h header, payloads [][]byte) (*header, [][]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken != nil {
		return nil, nil, w.broken
	}
	if err := context.Cause(ctx); err != nil { // nothing sent yet: no need to kill
		return nil, nil, fmt.Errorf("iree: %s not started: %v", what, err)
	}
	resp, outs, err := w.roundtrip(ctx, what, &h, payloads)
	if err != nil {
		w.broken = err
		return nil, nil, err
	}
	if !resp.OK {
		return nil, nil, fmt.Errorf("iree: %s: %s", what, resp.Error)
	}
	return resp, outs, nil
}

// roundtrip writes h (if not nil) and payloads, then reads one response,
// in a goroutine so that ctx can interrupt it by killing the process.
func (w *Worker) roundtrip(ctx context.Context, what string, h *header, payloads [][]byte) (*header, [][]byte, error) {
	type result struct {
		h    *header
		outs [][]byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if h != nil {
			r.err = w.send(h, payloads)
		}
		if r.err == nil {
			r.h, r.outs, r.err = w.receive()
		}
		done <- r
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, nil, w.deathError(what, r.err)
		}
		return r.h, r.outs, nil
	case <-ctx.Done():
		w.kill()
		<-done // the pipes close with the process, so this returns
		return nil, nil, fmt.Errorf("iree worker: killed during %s because the context ended (%v): start a new worker", what, context.Cause(ctx))
	}
}

func (w *Worker) send(h *header, payloads [][]byte) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
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

func (w *Worker) receive() (*header, [][]byte, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(w.stdout, lenBuf[:]); err != nil {
		return nil, nil, err
	}
	n := binary.LittleEndian.Uint32(lenBuf[:])
	if n > maxHeader {
		return nil, nil, fmt.Errorf("protocol error: %d-byte response header", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(w.stdout, b); err != nil {
		return nil, nil, err
	}
	var h header
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, nil, fmt.Errorf("protocol error: bad response header: %v", err)
	}
	// The header is checked before any payload is allocated: dtype, shape
	// and byte count must agree, within maxPayload.
	for i, d := range h.Result {
		n, err := tensor.NumElements(d.Shape)
		if err != nil || !d.DType.Valid() || d.NBytes < 0 || d.NBytes > maxPayload || n*int64(d.DType.Size()) != d.NBytes {
			return nil, nil, fmt.Errorf("protocol error: result %d is %s%v with %d bytes", i, d.DType, d.Shape, d.NBytes)
		}
	}
	outs := make([][]byte, len(h.Result))
	for i, d := range h.Result {
		outs[i] = make([]byte, d.NBytes)
		if _, err := io.ReadFull(w.stdout, outs[i]); err != nil {
			return nil, nil, err
		}
	}
	return &h, outs, nil
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
