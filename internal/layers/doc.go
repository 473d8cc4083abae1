// Package layers holds the test of archc's import rules (layers_test.go).
// A package's layer is its folder: formats/ holds the leaf contracts (the
// weight-storage table formats, the GGUF container formats/gguf,
// formats/tensor, the module interface formats/abi, the IREE tools
// formats/ireetool), which link nothing else of archc; the compiler (dsl,
// lower, codegen) links formats only; driver/ links the compiler, and its
// leaf tools driver/weights (safetensors and MLX affine readers) and
// driver/kernels (the CPU kernels) link formats only; the runtime (rt/:
// its engine, the IREE worker, the tokenizer, chat templates) and server/
// (with server/toolcall) link formats and each other, none of the compiler
// or the driver. Only cmd/* and internal/* (internal/launch) join the
// compiler side and the runtime.
package layers
