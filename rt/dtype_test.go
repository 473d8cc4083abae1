package rt_test

import (
	"context"
	"encoding/binary"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testckpt"
	"math"
	"testing"

	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/internal/testmodels"
)

// TestHalfPrecisionCheckpoints checks the in-graph conversion of f16 and
// bf16 weights: a checkpoint stored in f16 (or bf16) must give exactly the
// logits of the f32 checkpoint holding the same, already rounded, values,
// through the plain lowering (the f16/bf16 kernels sum in another order;
// driver/kernels tests them against the plain lowering).
func TestHalfPrecisionCheckpoints(t *testing.T) {
	testmodels.NeedIREE(t)
	ctx := context.Background()
	prompt := []int32{1, 184, 106, 66, 98, 250, 217}
	for _, c := range []struct {
		dtype string
		round func(float32) ([]byte, float32) // half bytes, and the value they hold
	}{
		{"BF16", func(x float32) ([]byte, float32) {
			h := uint16(math.Float32bits(x) >> 16) // truncation is a valid bf16 value
			return binary.LittleEndian.AppendUint16(nil, h), math.Float32frombits(uint32(h) << 16)
		}},
		{"F16", func(x float32) ([]byte, float32) {
			h := f32ToF16(x)
			return binary.LittleEndian.AppendUint16(nil, h), tensor.F16ToF32(h)
		}},
	} {
		t.Run(c.dtype, func(t *testing.T) {
			convert := func(half bool) func(map[string]testckpt.STTensor) {
				return func(ts map[string]testckpt.STTensor) {
					for name, x := range ts {
						var out []byte
						for i := 0; i < len(x.Data); i += 4 {
							hb, v := c.round(math.Float32frombits(binary.LittleEndian.Uint32(x.Data[i:])))
							if half {
								out = append(out, hb...)
							} else {
								out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
							}
						}
						if half {
							ts[name] = testckpt.STTensor{DType: c.dtype, Shape: x.Shape, Data: out}
						} else {
							ts[name] = testckpt.STTensor{DType: "F32", Shape: x.Shape, Data: out}
						}
					}
				}
			}
			var logits [2][]float32
			for i, half := range []bool{false, true} {
				m, err := launch.Open(ctx, testckpt.FixtureCopy(t, convert(half), nil), launch.Options{NoKernels: true})
				if err != nil {
					t.Fatal(err)
				}
				if logits[i], err = m.Prefill(ctx, prompt, 0); err != nil {
					t.Fatal(err)
				}
				m.Close()
			}
			for i := range logits[0] {
				if logits[0][i] != logits[1][i] {
					t.Fatalf("logit %d: f32 checkpoint %v, %s checkpoint %v", i, logits[0][i], c.dtype, logits[1][i])
				}
			}
		})
	}
}

// f32ToF16 rounds to the nearest f16 (normal range only; the fixture's
// weights are small normal numbers).
func f32ToF16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	if exp <= 0 {
		return sign
	}
	h := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}
