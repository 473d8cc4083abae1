// Package layers holds the test of archc's import rules (layers_test.go):
// the leaf formats (the weight-storage table rt/formats, the GGUF
// container rt/gguf, safetensors and MLX affine rt/weights, rt/tensor, and
// the module interface rt/abi, and the tools rt/ireetool and rt/kernels)
// link nothing else of archc; the compiler
// (dsl, lower, codegen) links no driver and no runtime; the driver links
// no runtime; the runtime (rt, its engine, the IREE worker, the tokenizer,
// chat templates) and the server link none of the compiler or the driver.
// Only cmd/* and internal/* (internal/launch) join the compiler side and
// the runtime. A package's layer is its folder (layer in the test): a new
// package under rt/ is runtime unless the test lists it as a format.
package layers
