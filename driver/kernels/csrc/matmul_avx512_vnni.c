// archc's hand-written CPU kernels, AVX-512 VNNI int8-activation variant
// (--precision int8): y = x · Wᵀ for a block-quantized GGUF weight W, with
// the activations x quantized per 32-element block to int8 as llama.cpp's
// quantize_row_q8_0 does (d = max|x|/127, q = round(x/d)) and the products
// summed in int32 by vpdpbusd (unsigned weight codes × signed activation
// codes), then scaled by the weight's and the activation's block scales in
// f32. Not exact: the result differs from x·Wᵀ by the activations' rounding
// (about 0.4 % of a block's largest |x|), as llama.cpp's own CPU backend
// does; f16 and bf16 weights keep matmul_avx512.c's exact f32 kernels.
//
// Same ABI as matmul_avx512.c (read matmul_avx2.c's header first); this
// file includes that one with ARCHC_INT8 defined, which leaves the
// block-quantized formats' kernels to this file.
//
// Every format's weight w_j of block b is written as
//   w_j = scale_b · (c_j − C) + min_b
// with c_j an unsigned code (0..255), C a constant of the format (Q4_0 8,
// Q5_0 16, Q6_K 32, Q8_0 128 after flipping the sign bit, else 0), so
//   Σ_j w_j x_j ≈ scale_b · dx_b · (Σ_j c_j q_j − C Σ_j q_j) + min_b · dx_b · Σ_j q_j
// where x_j ≈ dx_b · q_j. The integer sums take one vpdpbusd per 64
// elements (two blocks), started from −C·Σ q_j (computed once per token
// when x is quantized); min_b · dx_b · Σ q_j takes s_b = dx_b · Σ q_j, kept
// with the quantized block as ggml's block_q8_1 keeps it.
//
// The loops run over units of 256 elements (8 blocks; a K-quant's
// super-block), whose weight scales and mins are decoded once into vectors
// (sc16: the scale of each 16-element subgroup, so Q6_K's fit too). One
// token (decode) takes a GEMV, a row per loop: the grouped one (Q4_0, Q4_1,
// Q4_K, Q5_K) or the pairs' (the others); more tokens take the GEMM, 16
// rows in the lanes (i8_micro).
//
// Requirements: matmul_avx512.c's plus AVX-512 VNNI.
#define ARCHC_INT8 1
#include "matmul_avx512.c"

// 4-bit codes of two 32-formats' blocks: qs0, qs1 hold 16 bytes each, byte j
// element j (low nibble) and j+16 (high nibble). Each block's bytes fill two
// 128-bit lanes (one broadcast load), the second lane shifted by 4: the
// codes in natural order [lo0 hi0 lo1 hi1].
static inline __m512i nibbles2(const uint8_t *qs0, const uint8_t *qs1) {
  __m256i a = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs0));
  __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs1));
  __m512i c = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
  c = _mm512_mask_srli_epi16(c, (__mmask32)0xff00ff00u, c, 4);
  return _mm512_and_si512(c, _mm512_set1_epi8(0x0f));
}

// The 5th bits of two 32-formats' blocks (bit j of qh element j) as +16.
static inline __m512i fifth2(__m512i c, uint32_t qh0, uint32_t qh1) {
  __mmask64 m = (__mmask64)qh0 | ((__mmask64)qh1 << 32);
  return _mm512_mask_add_epi8(c, m, c, _mm512_set1_epi8(16));
}

// Lane j of the result is lane j/2 of v (eight block values to sixteen
// subgroup lanes).
static inline v16f per_subgroup(__m256 v) {
  return lookup16(_mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7), _mm512_castps256_ps512(v));
}

// A quantized unit of activations: Q[p] the codes of blocks 2p (bytes
// 0..31) and 2p+1 (32..63) in natural order, d8 each block's scale, s8 =
// d·Σq per block, h16 lane 2b+h Σq over half h (16 elements) of block b;
// zero past the unit's last block.
typedef struct {
  __m512i Q[4];
  __m256 d8, s8;
  __m512i h16;
} qunit;

// quantize8 quantizes the nb (<= 8) 32-element blocks of one unit of
// activations x, rounding as llama.cpp's quantize_row_q8_0 does (d =
// max|x|/127, q = round(x·127/max|x|): nearest, ties to even under the
// default MXCSR). The eight blocks go through together, the per-block
// reductions as trees of shuffles across them: one block at a time
// (horizontal max and sums per block, codes written as 16-byte pieces and
// read back as 64-byte vectors) cost about 200 cycles a block on Zen 4 (EPYC),
// 40 % of a 128-row single-token workgroup's time.
static inline qunit quantize8(const float *x, size_t nb) {
  v16f v[16], m[8], c[4], e[2];
  for (size_t i = 0; i < 16; i++) v[i] = i < 2 * nb ? _mm512_loadu_ps(x + 16 * i) : _mm512_setzero_ps();
  for (int b = 0; b < 8; b++) m[b] = _mm512_max_ps(_mm512_abs_ps(v[2 * b]), _mm512_abs_ps(v[2 * b + 1]));
  // c[p] 128-bit lanes: partial maxima of blocks 2p, 2p, 2p+1, 2p+1; e[r]
  // lane L: of block 4r+L; then across each lane's four floats.
  for (int p = 0; p < 4; p++)
    c[p] = _mm512_max_ps(_mm512_shuffle_f32x4(m[2 * p], m[2 * p + 1], 0x44), _mm512_shuffle_f32x4(m[2 * p], m[2 * p + 1], 0xee));
  for (int r = 0; r < 2; r++)
    e[r] = _mm512_max_ps(_mm512_shuffle_f32x4(c[2 * r], c[2 * r + 1], 0x88), _mm512_shuffle_f32x4(c[2 * r], c[2 * r + 1], 0xdd));
  v16f t = _mm512_max_ps(_mm512_unpacklo_ps(e[0], e[1]), _mm512_unpackhi_ps(e[0], e[1]));
  t = _mm512_max_ps(t, _mm512_permute_ps(t, 0x4e));
  __m256 amax = _mm512_castps512_ps256(lookup16(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), t));
  qunit r;
  r.d8 = _mm256_div_ps(amax, _mm256_set1_ps(127.0f));
  __m256 id = _mm256_maskz_div_ps(_mm256_cmp_ps_mask(amax, _mm256_setzero_ps(), _CMP_NEQ_OQ), _mm256_set1_ps(127.0f), amax);
  v16f idz = _mm512_castps256_ps512(id);
  // Codes: per pair of blocks, four vectors of int32 packed to bytes
  // (lane-interleaved by the packs, put back in order by one permute), and
  // their sums per 4 bytes (vpdpbusd with ones) for Σq.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i R[4];
  for (int p = 0; p < 4; p++) {
    v16f i0 = lookup16(_mm512_set1_epi32(2 * p), idz), i1 = lookup16(_mm512_set1_epi32(2 * p + 1), idz);
    __m512i a0 = _mm512_cvtps_epi32(_mm512_mul_ps(v[4 * p], i0)), a1 = _mm512_cvtps_epi32(_mm512_mul_ps(v[4 * p + 1], i0));
    __m512i a2 = _mm512_cvtps_epi32(_mm512_mul_ps(v[4 * p + 2], i1)), a3 = _mm512_cvtps_epi32(_mm512_mul_ps(v[4 * p + 3], i1));
    __m512i b8 = _mm512_packs_epi16(_mm512_packs_epi32(a0, a1), _mm512_packs_epi32(a2, a3));
    r.Q[p] = _mm512_permutexvar_epi32(order, b8);
    R[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), r.Q[p]);
  }
  // R[p] lanes 4j..4j+3 sum to half j%2 of block 2p + j/2: per 128-bit
  // lane L, w[L] dword p = R[p]'s lane-L total.
  __m512i u01 = _mm512_add_epi32(_mm512_unpacklo_epi32(R[0], R[1]), _mm512_unpackhi_epi32(R[0], R[1]));
  __m512i u23 = _mm512_add_epi32(_mm512_unpacklo_epi32(R[2], R[3]), _mm512_unpackhi_epi32(R[2], R[3]));
  __m512i w = _mm512_add_epi32(_mm512_unpacklo_epi64(u01, u23), _mm512_unpackhi_epi64(u01, u23));
  // w dword 4L + p: half L%2 of block 2p + L/2 = h16 lane 4p + L.
  r.h16 = _mm512_permutexvar_epi32(order, w);
  __m512i bs = _mm512_add_epi32(r.h16, _mm512_srli_epi64(r.h16, 32));
  __m256i blk = _mm512_castsi512_si256(_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0), bs));
  r.s8 = _mm256_mul_ps(r.d8, _mm256_cvtepi32_ps(blk));
  return r;
}

// The pairs' GEMV (one token; Q8_0, Q5_0, Q5_1, Q6_K): a row at a time,
// the codes in natural order, each pair of blocks' scales put in its lanes
// with one permute. Its activations are quantized GKC elements at a time (a
// 2048-row K=8192 weight ran 10 % slower with 2048 than with 8192, whose
// 19 KiB of stack the kernel keeps in its own frame: noinline), in natural
// order, with each 64-element vector's vpdpbusd start -C·Σq per dword lane
// (c0). Measured on a 2-core Zen 4 (EPYC), one thread, Q4_0 past L3:
// 8192x2048 11.2 -> 12.6 GB/s, 2048x8192 9.3 -> 11.8 against the token
// tiles it replaced at one token; the exact kernel 10.9 / 10.1.
#define GKC 8192
#define GKU (GKC / 256)
typedef struct {
  __m512i q[GKU][4], c0[GKU][4];
  v16f dx16[GKU];
  __m256 s8[GKU];
} gchunk;

// quantize_gchunk quantizes kc activations x (kc a multiple of 32, at most
// GKC) of one token into a, in natural order, with C the format's code offset.
static inline void quantize_gchunk(const float *x, size_t kc, int C, gchunk *a) {
  size_t nb = kc / 32, nu = (kc + 255) / 256;
  const __m512i cc = _mm512_set1_epi8((char)C);
  for (size_t u = 0; u < nu; u++) {
    qunit r = quantize8(x + 256 * u, nb - 8 * u < 8 ? nb - 8 * u : 8);
    for (int v = 0; v < 4; v++) {
      a->q[u][v] = r.Q[v];
      a->c0[u][v] = C ? _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), cc, r.Q[v]))
                      : _mm512_setzero_si512();
    }
    a->dx16[u] = per_subgroup(r.d8);
    a->s8[u] = r.s8;
  }
}

// A unit's weight scales: sc16 lane j the scale of elements 16j..16j+15,
// min8 lane b block b's min (zero for formats without one).
typedef struct {
  v16f sc16;
  __m256 min8;
} wunit;


// The first four bytes of each of a 32-format's nb (<= 8) blocks from b
// (blocks of stride bytes): its f16 scale and, for Q4_1 and Q5_1, its min.
// A whole unit's eight heads are read by scalar loads and moved as four
// qwords: the masked gather (kept for a partial unit) is microcoded on Zen 4,
// where the Q4_0 and Q8_0 single-token kernels ran 1.04-1.19x faster
// without it (one thread, 256 and 8192 rows of K=2048; same outputs).
static inline __m256i heads8(const uint8_t *b, int stride, size_t nb) {
  if (nb == 8) {
    uint64_t q[4];
    for (int i = 0; i < 4; i++) {
      uint32_t lo, hi;
      __builtin_memcpy(&lo, b + stride * (2 * i), 4);
      __builtin_memcpy(&hi, b + stride * (2 * i + 1), 4);
      q[i] = (uint64_t)lo | ((uint64_t)hi << 32);
    }
    return _mm256_setr_epi64x((long long)q[0], (long long)q[1], (long long)q[2], (long long)q[3]);
  }
  __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(stride));
  __mmask8 m = (__mmask8)((1u << nb) - 1);
  return _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), m, idx, (const int *)b, 1);
}
static inline __m256 lo_f16(__m256i h) { return _mm256_cvtph_ps(_mm256_cvtepi32_epi16(h)); }
static inline __m256 hi_f16(__m256i h) { return _mm256_cvtph_ps(_mm256_cvtepi32_epi16(_mm256_srli_epi32(h, 16))); }

// The format decoders. UNIT_<F>(row, u, nb, wu) fills wu for unit u (its
// first nb blocks exist); PAIR_<F>(row, g, g1) returns the codes of blocks
// g and g1 (g1 == g for a partial unit's odd last block: its products meet
// zero activations). C_<F> is the format's code offset, HAS_MIN_<F>
// whether it has mins.

#define UNIT32(row, u, nb, stride, with_min, wu)                                                   \
  do {                                                                                             \
    __m256i h = heads8(row + (size_t)(stride) * 8 * (u), stride, nb);                              \
    wu.sc16 = per_subgroup(lo_f16(h));                                                             \
    wu.min8 = with_min ? hi_f16(h) : _mm256_setzero_ps();                                          \
  } while (0)

// SUB16_<F>: whether the format's scales change every 16 elements (Q6_K)
// rather than every block.
#define SUB16_Q4_0 0
#define SUB16_Q4_1 0
#define SUB16_Q5_0 0
#define SUB16_Q5_1 0
#define SUB16_Q8_0 0
#define SUB16_Q4_K 0
#define SUB16_Q5_K 0
#define SUB16_Q6_K 1

#define C_Q4_0 8
#define HAS_MIN_Q4_0 0
#define UNIT_Q4_0(row, u, nb, wu) UNIT32(row, u, nb, 18, 0, wu)
#define PAIR_Q4_0(row, g, g1) nibbles2(row + 18 * (g) + 2, row + 18 * (g1) + 2)

#define C_Q4_1 0
#define HAS_MIN_Q4_1 1
#define UNIT_Q4_1(row, u, nb, wu) UNIT32(row, u, nb, 20, 1, wu)
#define PAIR_Q4_1(row, g, g1) nibbles2(row + 20 * (g) + 4, row + 20 * (g1) + 4)

#define C_Q5_0 16
#define HAS_MIN_Q5_0 0
#define UNIT_Q5_0(row, u, nb, wu) UNIT32(row, u, nb, 22, 0, wu)
#define PAIR_Q5_0(row, g, g1)                                                                      \
  fifth2(nibbles2(row + 22 * (g) + 6, row + 22 * (g1) + 6), u32le(row + 22 * (g) + 2), u32le(row + 22 * (g1) + 2))

#define C_Q5_1 0
#define HAS_MIN_Q5_1 1
#define UNIT_Q5_1(row, u, nb, wu) UNIT32(row, u, nb, 24, 1, wu)
#define PAIR_Q5_1(row, g, g1)                                                                      \
  fifth2(nibbles2(row + 24 * (g) + 8, row + 24 * (g1) + 8), u32le(row + 24 * (g) + 4), u32le(row + 24 * (g1) + 4))

// Q8_0: signed codes with the sign bit flipped (c = q + 128).
#define C_Q8_0 128
#define HAS_MIN_Q8_0 0
#define UNIT_Q8_0(row, u, nb, wu) UNIT32(row, u, nb, 34, 0, wu)
static inline __m512i pair_q8_0(const uint8_t *b0, const uint8_t *b1) {
  __m256i q0 = _mm256_loadu_si256((const __m256i *)(b0 + 2)), q1 = _mm256_loadu_si256((const __m256i *)(b1 + 2));
  return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1), _mm512_set1_epi8((char)0x80));
}
#define PAIR_Q8_0(row, g, g1) pair_q8_0(row + 34 * (g), row + 34 * (g1))

// The 6-bit scales and mins of a Q4_K/Q5_K super-block (12 bytes at q),
// as ggml's get_scale_min_k4 reads them, into eight bytes each.
static inline void scales_k4(const uint8_t *q, uint8_t sc[8], uint8_t mn[8]) {
  uint32_t a = u32le(q), b = u32le(q + 4), c = u32le(q + 8);
  const uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, m2 = 0x03030303;
  uint32_t s0 = a & m6, s1 = (c & m4) | (((a >> 6) & m2) << 4);
  uint32_t n0 = b & m6, n1 = ((c >> 4) & m4) | (((b >> 6) & m2) << 4);
  for (int i = 0; i < 4; i++) {
    sc[i] = (uint8_t)(s0 >> (8 * i)), sc[i + 4] = (uint8_t)(s1 >> (8 * i));
    mn[i] = (uint8_t)(n0 >> (8 * i)), mn[i + 4] = (uint8_t)(n1 >> (8 * i));
  }
}

// Q4_K / Q5_K unit: w = (d·sc)·q − dmin·m per 32-element sub-block.
// k4_scales8: a Q4_K/Q5_K super-block's (b) eight sub-block scales d·sc
// and mins −dmin·m. (Unpacked in general-purpose registers: a vector
// unpacking with pshufb and shifts measured 0.93x in the single-token
// kernel on Zen 4, its shuffle pipes being the busy ones.)
static inline void k4_scales8(const uint8_t *b, __m256 *sc8, __m256 *min8) {
  uint8_t sc[8], mn[8];
  scales_k4(b + 4, sc, mn);
  __m256 s = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)sc)));
  __m256 m = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)mn)));
  *sc8 = _mm256_mul_ps(_mm256_set1_ps(f16(b)), s);
  *min8 = _mm256_mul_ps(_mm256_set1_ps(-f16(b + 2)), m);
}
static inline void unit_k4(const uint8_t *b, wunit *wu) {
  __m256 sc8;
  k4_scales8(b, &sc8, &wu->min8);
  wu->sc16 = per_subgroup(sc8);
}

// Q4_K: sub-blocks 2c and 2c+1 (g even) share the 32 bytes of chunk c, low
// and high nibbles.
#define C_Q4_K 0
#define HAS_MIN_Q4_K 1
#define UNIT_Q4_K(row, u, nb, wu) unit_k4(row + 144 * (u), &wu)
static inline __m512i pair_q4_k(const uint8_t *b, int i) {
  __m256i q = _mm256_loadu_si256((const __m256i *)(b + 16 + 16 * i)), m4 = _mm256_set1_epi8(0x0f);
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(q, m4)), _mm256_and_si256(_mm256_srli_epi16(q, 4), m4), 1);
}
#define PAIR_Q4_K(row, g, g1) pair_q4_k(row + 144 * ((g) / 8), (int)((g) % 8))

// Q5_K: as Q4_K, with bit i of qh[l] the 5th bit of sub-block i.
#define C_Q5_K 0
#define HAS_MIN_Q5_K 1
#define UNIT_Q5_K(row, u, nb, wu) unit_k4(row + 176 * (u), &wu)
static inline __m512i pair_q5_k(const uint8_t *b, int i) {
  __m256i q = _mm256_loadu_si256((const __m256i *)(b + 48 + 16 * i)), m4 = _mm256_set1_epi8(0x0f);
  __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 16)), one = _mm256_set1_epi8(1);
  __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, i), one), 4));
  __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                               _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, i + 1), one), 4));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
#define PAIR_Q5_K(row, g, g1) pair_q5_k(row + 176 * ((g) / 8), (int)((g) % 8))

// Q6_K: w = (d·sc)·(q − 32) with one int8 scale per 16 elements; groups k
// and k+1 (k = 0 or 2) of a 128-element half take the low 4 bits from 64
// bytes of ql (k >= 2: the high nibbles) and 2 high bits from qh shifted by
// 2k and 2k+2.
#define C_Q6_K 32
#define HAS_MIN_Q6_K 0
static inline void unit_q6_k(const uint8_t *b, wunit *wu) {
  v16f s = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 192))));
  wu->sc16 = _mm512_mul_ps(_mm512_set1_ps(f16(b + 208)), s);
  wu->min8 = _mm256_setzero_ps();
}
#define UNIT_Q6_K(row, u, nb, wu) unit_q6_k(row + 210 * (u), &wu)
static inline __m512i pair_q6_k(const uint8_t *b, int i) {
  int half = i / 4, k = i % 4;
  __m512i l = _mm512_loadu_si512((const void *)(b + 64 * half));
  if (k >= 2) l = _mm512_srli_epi16(l, 4);
  l = _mm512_and_si512(l, _mm512_set1_epi8(0x0f));
  __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 128 + 32 * half)), three = _mm256_set1_epi8(3);
  __m256i h0 = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), three);
  __m256i h1 = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k + 2), three);
  __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1);
  return _mm512_or_si512(l, _mm512_slli_epi16(h, 4));
}
#define PAIR_Q6_K(row, g, g1) pair_q6_k(row + 210 * ((g) / 8), (int)((g) % 8))

// hsum8: the sum of v's eight lanes.
static inline float hsum8(__m256 v) {
  __m128 o4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  o4 = _mm_add_ps(o4, _mm_movehl_ps(o4, o4));
  return _mm_cvtss_f32(_mm_add_ss(o4, _mm_shuffle_ps(o4, o4, 1)));
}

// The grouped GEMV (one token) of Q4_0, Q4_1, Q4_K and Q5_K: a unit's codes
// reach the vpdpbusd as whole 64-byte vectors of four 16-element (or two
// 32-element) runs, from a word permute of the raw unit (32-element
// formats) or a plain load (K-quants), with no shuffle per block: on Zen 4
// (EPYC) the permutes, shifts, int-to-float conversions and broadcasts
// share two of the four vector pipes (one 512-bit op per cycle between
// them; measured), and the pair-at-a-time GEMV above spends six of them per
// two blocks where this one spends about two. One thread, 256 rows of
// K=2048 (L2), GMAC/s pairs -> grouped: Q4_0 28.0 -> 49.0, Q4_1 26.8 ->
// 43.8 (with quantize8); Q4_K and Q5_K 1.08-1.16x (their scales' unpacking
// is a quarter of the work; Q8_0, Q5_0, Q5_1 and Q6_K keep the pairs).
//
// Its activations, per unit and group g (128 elements): lo[g] and hi[g] the
// codes that meet the low and high nibbles of the group's weight vector
// (32-element formats: 128-bit lane L holds elements 0..15 / 16..31 of
// block 4g+L; K-quants: sub-blocks 4g, 4g+2 / 4g+1, 4g+3, as Q4_K's 32-byte
// chunks hold them), c0[g] the vpdpbusd start −C·Σq per dword lane, and per
// block the scale dx8 and s8 = dx·Σq.
typedef struct {
  __m512i lo[GKU][2], hi[GKU][2], c0[GKU][2];
  __m256 dx8[GKU], s8[GKU];
} gact;

// quantize_gact quantizes kc activations x (kc a multiple of 32, at most
// GKC) of one token into a; k4: the K-quant layout; C the format's code
// offset.
static inline void quantize_gact(const float *x, size_t kc, int C, int k4, gact *a) {
  size_t nb = kc / 32, nu = (kc + 255) / 256;
  const __m512i cc = _mm512_set1_epi8((char)C);
  for (size_t u = 0; u < nu; u++) {
    qunit r = quantize8(x + 256 * u, nb - 8 * u < 8 ? nb - 8 * u : 8);
    for (int g = 0; g < 2; g++) {
      __m512i q0 = r.Q[2 * g], q1 = r.Q[2 * g + 1];
      // 128-bit lanes of q0, q1: block 4g (its halves), 4g+1, then 4g+2, 4g+3.
      a->lo[u][g] = k4 ? _mm512_shuffle_i64x2(q0, q1, 0x44) : _mm512_shuffle_i64x2(q0, q1, 0x88);
      a->hi[u][g] = k4 ? _mm512_shuffle_i64x2(q0, q1, 0xee) : _mm512_shuffle_i64x2(q0, q1, 0xdd);
      a->c0[u][g] = C ? _mm512_sub_epi32(_mm512_setzero_si512(),
                                         _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), cc, a->lo[u][g]), cc, a->hi[u][g]))
                      : _mm512_setzero_si512();
    }
    a->dx8[u] = r.d8;
    a->s8[u] = r.s8;
  }
}

// A 32-element format's unit (8 blocks of S bytes, codes at Q, the f16
// scale at 0 and min at 2) is read as two 128-byte windows, [0, 128) and
// [8S − 128, 8S), each two 64-byte loads: ci[g] takes group g's codes
// (word 8L + k: word k of block 4g+L's codes; S and Q are even) from
// window g, hx[w] the heads (word i: block i's scale, word 8 + i its min)
// from window w, hm the words taken from window 1.
typedef struct {
  __m512i ci[2], hx[2];
  __mmask32 hm;
} g32_tables;

static inline g32_tables g32_index(int S, int Q, int has_min) {
  uint16_t c[2][32], h[2][32];
  int w1 = 8 * S - 128, hb = has_min ? 4 : 2;
  g32_tables t;
  t.hm = 0;
  for (int g = 0; g < 2; g++)
    for (int j = 0; j < 32; j++) c[g][j] = (uint16_t)((S * (4 * g + j / 8) + Q + 2 * (j % 8) - (g ? w1 : 0)) / 2);
  for (int j = 0; j < 32; j++) h[0][j] = h[1][j] = 0;
  for (int i = 0; i < 8; i++) {
    int one = S * i + hb > 128;
    for (int m = 0; m < (has_min ? 2 : 1); m++) {
      int off = S * i + 2 * m;
      h[0][8 * m + i] = (uint16_t)(one ? 0 : off / 2);
      h[1][8 * m + i] = (uint16_t)(one ? (off - w1) / 2 : 0);
      if (one) t.hm |= (__mmask32)1 << (8 * m + i);
    }
  }
  for (int g = 0; g < 2; g++) {
    t.ci[g] = _mm512_loadu_si512((const void *)c[g]);
    t.hx[g] = _mm512_loadu_si512((const void *)h[g]);
  }
  return t;
}

// The mask of the bytes [o, o + 64) of a span of n bytes.
static inline __mmask64 span_mask(size_t n, size_t o) {
  return n <= o ? 0 : n - o >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - o)) - 1);
}

// g_dot: the products of a group's 64 bytes of 4-bit codes (two nibbles
// each) with its activations, times the per-lane scales sg, added to acc.
static inline v16f g_dot(__m512i p, __m512i lo, __m512i hi, __m512i c0, v16f sg, v16f acc) {
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i s = _mm512_dpbusd_epi32(c0, _mm512_and_si512(p, m4), lo);
  s = _mm512_dpbusd_epi32(s, _mm512_and_si512(_mm512_srli_epi16(p, 4), m4), hi);
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sg, acc);
}

// One unit of a 32-element format (S-byte blocks, codes at Q; nb <= 8
// blocks, masked loads past them) of row bytes b.
static inline __attribute__((always_inline)) void g32_unit(const uint8_t *b, size_t nb, int S, int has_min,
                                                           const g32_tables *t, const gact *a, size_t v,
                                                           v16f *acc0, v16f *acc1, __m256 *off) {
  __m512i A, B, C, D;
  size_t ub = 8 * (size_t)S;
  if (nb == 8) {
    A = _mm512_loadu_si512((const void *)b), B = _mm512_loadu_si512((const void *)(b + 64));
    C = _mm512_loadu_si512((const void *)(b + ub - 128)), D = _mm512_loadu_si512((const void *)(b + ub - 64));
  } else {
    size_t n = (size_t)S * nb;
    A = _mm512_maskz_loadu_epi8(span_mask(n, 0), b), B = _mm512_maskz_loadu_epi8(span_mask(n, 64), b + 64);
    C = _mm512_maskz_loadu_epi8(span_mask(n, ub - 128), b + ub - 128);
    D = _mm512_maskz_loadu_epi8(span_mask(n, ub - 64), b + ub - 64);
  }
  __m512i h = _mm512_permutex2var_epi16(A, t->hx[0], B);
  if (t->hm) h = _mm512_mask_blend_epi16(t->hm, h, _mm512_permutex2var_epi16(C, t->hx[1], D));
  v16f hf = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
  __m256 sc8 = _mm256_mul_ps(_mm512_castps512_ps256(hf), a->dx8[v]);
  if (has_min) *off = _mm256_fmadd_ps(_mm512_extractf32x8_ps(hf, 1), a->s8[v], *off);
  v16f sc = _mm512_castps256_ps512(sc8);
  *acc0 = g_dot(_mm512_permutex2var_epi16(A, t->ci[0], B), a->lo[v][0], a->hi[v][0], a->c0[v][0],
                lookup16(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), sc), *acc0);
  *acc1 = g_dot(_mm512_permutex2var_epi16(C, t->ci[1], D), a->lo[v][1], a->hi[v][1], a->c0[v][1],
                lookup16(_mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7), sc), *acc1);
}

// One unit (super-block) of Q4_K or Q5_K (q5: the 5th bits at b + 16, the
// codes at b + 48) of row bytes b. Group g's 64 bytes are chunks 2g and
// 2g + 1: low nibbles sub-blocks 4g and 4g+2, high nibbles 4g+1 and 4g+3.
static inline __attribute__((always_inline)) void k4_unit(const uint8_t *b, int q5, const gact *a, size_t v,
                                                          v16f acc[4], __m256 *off) {
  __m256 sc8, min8;
  k4_scales8(b, &sc8, &min8);
  *off = _mm256_fmadd_ps(min8, a->s8[v], *off);
  v16f scz = _mm512_castps256_ps512(_mm256_mul_ps(sc8, a->dx8[v]));
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i qh = q5 ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 16))) : _mm512_setzero_si512();
  for (int g = 0; g < 2; g++) {
    __m512i p = _mm512_loadu_si512((const void *)(b + (q5 ? 48 : 16) + 64 * g));
    __m512i lo = _mm512_and_si512(p, m4), hi = _mm512_and_si512(_mm512_srli_epi16(p, 4), m4);
    if (q5) {
      const __m512i sixteen = _mm512_set1_epi8(16);
      __m512i bl = _mm512_mask_blend_epi8(0xffffffff00000000ull, _mm512_set1_epi8((char)(1 << (4 * g))), _mm512_set1_epi8((char)(1 << (4 * g + 2))));
      __m512i bh = _mm512_mask_blend_epi8(0xffffffff00000000ull, _mm512_set1_epi8((char)(1 << (4 * g + 1))), _mm512_set1_epi8((char)(1 << (4 * g + 3))));
      lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(qh, bl), lo, sixteen);
      hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(qh, bh), hi, sixteen);
    }
    __m512i il = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
    __m512i ih = _mm512_setr_epi32(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3);
    __m512i g4 = _mm512_set1_epi32(4 * g);
    __m512i slo = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, a->lo[v][g]);
    __m512i shi = _mm512_dpbusd_epi32(_mm512_setzero_si512(), hi, a->hi[v][g]);
    acc[2 * g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(slo), lookup16(_mm512_add_epi32(il, g4), scz), acc[2 * g]);
    acc[2 * g + 1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(shi), lookup16(_mm512_add_epi32(ih, g4), scz), acc[2 * g + 1]);
  }
}

// The grouped GEMV's geometry: G32_S_<F> and G32_Q_<F> a 32-element
// format's block bytes and codes offset, K4_Q5_<F> whether a K-quant has
// 5th bits, K4_BYTES_<F> its super-block's bytes.
#define G32_S_Q4_0 18
#define G32_Q_Q4_0 2
#define G32_S_Q4_1 20
#define G32_Q_Q4_1 4
#define K4_Q5_Q4_K 0
#define K4_Q5_Q5_K 1
#define K4_BYTES_Q4_K 144
#define K4_BYTES_Q5_K 176

// Prefill and every token count above one runs as a GEMM with 16 weight
// rows in the lanes: a unit (256 of K) of I8_NR rows is decoded once into
// i8_wtile, its codes transposed so that vector j of a pair of blocks holds
// elements 4j..4j+3 of every row (transpose16), its scales and mins one
// vector per 16-element subgroup or block. Then for each I8_MR tokens, per
// block, eight vpdpbusd per token each multiply the 16 rows' codes by four
// of the token's activation codes read by an embedded broadcast (no
// shuffle per product), starting from -C·Σq; one conversion, one multiply
// by the token's scale and one FMA by the rows' scales finish the block
// (one more FMA its mins; Q6_K, whose scales change every 16 elements,
// finishes each half). The activations are quantized once per unit for up
// to I8_MC tokens, shared by the workgroup's row tiles. It replaced tiles
// that decoded a unit per 8 tokens and shuffled every weight unit and
// activation unit into a subgroup-per-lane order: measured on a 2-core
// Zen 4 (EPYC), one thread, 2048 rows of K=2048, GMAC/s tiles -> GEMM (64
// rows per workgroup -> 128): Q4_0 at 64 tokens 66 -> 104, at 15 tokens 40
// -> 92, at 6 tokens 26 -> 62, at 2 tokens 26 -> 29; Q4_K at 64 tokens 68 ->
// 99.
#define I8_MR 8
#define I8_NR 16
#define I8_MC 128

// Up to I8_MC tokens' activations for one unit: codes in natural order
// (zero past the unit's last block), per block the scale d, s = d·Σq and
// c0 = -C·Σq, and c0h = -C·Σq per 16-element half.
typedef struct {
  int8_t q[I8_MC][256] __attribute__((aligned(64)));
  float d[I8_MC][8], s[I8_MC][8];
  int32_t c0[I8_MC][8], c0h[I8_MC][16];
} i8_act;

// One unit of I8_NR rows: c[16 p + j] the codes of elements 4j..4j+3 of
// blocks 2p, 2p+1 (64 codes) for each row (lane), sc[j] the rows' scales of
// 16-element subgroup j, mn[b] block b's mins (zero for formats without).
typedef struct {
  __m512i c[64];
  v16f sc[16], mn[8];
} i8_wtile;

// i8_quantize quantizes one unit (nb blocks from x) of token t for the GEMM,
// with C the format's code offset.
static inline void i8_quantize(const float *x, size_t nb, int C, i8_act *a, size_t t) {
  qunit r = quantize8(x, nb);
  for (int p = 0; p < 4; p++) _mm512_store_si512((void *)(a->q[t] + 64 * p), r.Q[p]);
  _mm256_storeu_ps(a->d[t], r.d8);
  _mm256_storeu_ps(a->s[t], r.s8);
  __m512i c0h = _mm512_mullo_epi32(r.h16, _mm512_set1_epi32(-C));
  _mm512_storeu_si512((void *)a->c0h[t], c0h);
  __m512i c0 = _mm512_add_epi32(c0h, _mm512_srli_epi64(c0h, 32));
  _mm256_storeu_si256((__m256i *)a->c0[t], _mm512_castsi512_si256(_mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0), c0)));
}

// i8_micro adds the products of TT tokens (from t0) with the tile's nb
// blocks to y (row stride ld, the tile's first column; zero first), lanes
// in rows; sub16: the scales change every 16 elements.
static inline __attribute__((always_inline)) void i8_micro(const i8_act *a, size_t t0, size_t TT,
                                                            const i8_wtile *wt, size_t nb, int has_min,
                                                            int sub16, float *y, size_t ld, __mmask16 rows,
                                                            int first) {
  v16f acc[I8_MR];
  for (size_t t = 0; t < TT; t++) acc[t] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rows, y + (t0 + t) * ld);
  for (size_t b = 0; b < nb; b++) {
    for (size_t h = 0; h < (sub16 ? 2u : 1u); h++) {
      __m512i ia[I8_MR];
      for (size_t t = 0; t < TT; t++) ia[t] = _mm512_set1_epi32(sub16 ? a->c0h[t0 + t][2 * b + h] : a->c0[t0 + t][b]);
      for (size_t j = sub16 ? 4 * h : 0; j < (sub16 ? 4 * h + 4 : 8); j++) {
        __m512i wv = wt->c[16 * (b / 2) + 8 * (b & 1) + j];
        for (size_t t = 0; t < TT; t++) {
          int32_t q4;
          __builtin_memcpy(&q4, a->q[t0 + t] + 32 * b + 4 * j, 4);
          ia[t] = _mm512_dpbusd_epi32(ia[t], wv, _mm512_set1_epi32(q4));
        }
      }
      for (size_t t = 0; t < TT; t++)
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia[t]), _mm512_mul_ps(wt->sc[2 * b + h], _mm512_set1_ps(a->d[t0 + t][b])), acc[t]);
    }
    if (has_min)
      for (size_t t = 0; t < TT; t++) acc[t] = _mm512_fmadd_ps(wt->mn[b], _mm512_set1_ps(a->s[t0 + t][b]), acc[t]);
  }
  for (size_t t = 0; t < TT; t++) _mm512_mask_storeu_ps(y + (t0 + t) * ld, rows, acc[t]);
}

// The driver shared by every format: NAME_gemv for one token (INT8_GEMV),
// NAME_gemm for more (INT8_GEMM).
// GEMV_PAIR(F, p, acc): pair p of unit u's blocks (nb of them) in a row of
// format F into acc, with dd the unit's scales per 16-element subgroup.
#define GEMV_PAIR(F, p, acc)                                                                       \
  {                                                                                                \
    size_t g = 8 * u + 2 * (p);                                                                    \
    __m512i c = PAIR_##F(row, g, 2 * (p) + 1 < nb ? g + 1 : g);                                    \
    __m512i s = _mm512_dpbusd_epi32(a.c0[v][p], c, a.q[v][p]);                                     \
    __m512i ix = _mm512_add_epi32(_mm512_set1_epi32(4 * (int)(p)),                                 \
                                  _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)); \
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), lookup16(ix, dd), acc);              \
  }

// A unit of a row for each kind of GEMV: GEMV_UNIT_<KIND>(F, row, u, v, nb,
// acc, off) adds unit u (the chunk's v-th; nb blocks) of format F's row to
// acc[0..GEMV_NACC_<KIND>) and off, with the chunk's activations a and tables t in scope.
// PAIRS: per pair p of blocks (64 elements in natural order), one vpdpbusd
// leaves the dot of elements 4i..4i+3 in lane i, whose 16-element subgroup
// is 4p + i/4: one permute of the unit's scales (weight times activation)
// gives its scale.
#define GEMV_UNIT_PAIRS(F, row, u, v, nb, acc, off)                                                \
  {                                                                                                \
    wunit wu;                                                                                      \
    UNIT_##F(row, u, nb, wu);                                                                      \
    v16f dd = _mm512_mul_ps(wu.sc16, a.dx16[v]);                                                   \
    if (nb == 8) {                                                                                 \
      GEMV_PAIR(F, 0, acc[0]) GEMV_PAIR(F, 1, acc[1]) GEMV_PAIR(F, 2, acc[0]) GEMV_PAIR(F, 3, acc[1]) \
    } else {                                                                                       \
      for (size_t p = 0; 2 * p < nb; p++) GEMV_PAIR(F, p, acc[0])                                  \
    }                                                                                              \
    if (HAS_MIN_##F) off = _mm256_fmadd_ps(wu.min8, a.s8[v], off);                                 \
  }
#define GEMV_UNIT_G32(F, row, u, v, nb, acc, off)                                                  \
  g32_unit(row + 8 * G32_S_##F * (u), nb, G32_S_##F, HAS_MIN_##F, &t, &a, v, &acc[0], &acc[1], &off);
#define GEMV_UNIT_K4(F, row, u, v, nb, acc, off) k4_unit(row + K4_BYTES_##F * (u), K4_Q5_##F, &a, v, acc, &off);
// Each kind's activations (GEMV_ACT_<KIND>), their quantization
// (GEMV_QUANT_<KIND>), its tables (GEMV_TABLES_<KIND>), the accumulators
// its units fill (GEMV_NACC_<KIND>) and how it prefetches a unit's bytes
// (GEMV_PREFETCH_<KIND>: the pairs' by a loop, measured 1.09x faster for
// Q8_0 than prefetch_short, one thread, Zen 4).
#define GEMV_ACT_PAIRS gchunk
#define GEMV_ACT_G32 gact
#define GEMV_ACT_K4 gact
#define GEMV_QUANT_PAIRS(F, x, kc) quantize_gchunk(x, kc, C_##F, &a)
#define GEMV_QUANT_G32(F, x, kc) quantize_gact(x, kc, C_##F, 0, &a)
#define GEMV_QUANT_K4(F, x, kc) quantize_gact(x, kc, 0, 1, &a)
#define GEMV_TABLES_PAIRS(F)
#define GEMV_TABLES_G32(F) const g32_tables t = g32_index(G32_S_##F, G32_Q_##F, HAS_MIN_##F);
#define GEMV_TABLES_K4(F)
#define GEMV_NACC_PAIRS 2
#define GEMV_NACC_G32 2
#define GEMV_NACC_K4 4
#define GEMV_PREFETCH_PAIRS(p, n) prefetch_span(p, n)
#define GEMV_PREFETCH_G32(p, n) if (n) prefetch_short(p, n)
#define GEMV_PREFETCH_K4(p, n) if (n) prefetch_short(p, n)

// INT8_GEMV(NAME, F, KIND): NAME_gemv, one token, columns [n0, n1): the
// activations quantized GKC elements at a time, then a row at a time its
// units (GEMV_UNIT_<KIND>).
#define INT8_GEMV(NAME, F, KIND)                                                                   \
  static __attribute__((noinline)) void NAME##_gemv(const float *x, const uint8_t *w, float *y,    \
                                                     size_t n0, size_t n1, size_t K, size_t rb) {  \
    GEMV_ACT_##KIND a;                                                                             \
    GEMV_TABLES_##KIND(F)                                                                          \
    for (size_t k0 = 0; k0 < K; k0 += GKC) {                                                       \
      size_t kc = K - k0 < GKC ? K - k0 : GKC, nu = (kc + 255) / 256, nbl = kc / 32 - 8 * (nu - 1);\
      size_t pfs = k0 ? 0 : (rb + nu - 1) / nu;                                                    \
      size_t pfo = K <= GKC ? PREFETCH_DIST : rb * ((PREFETCH_DIST + rb - 1) / rb);                \
      GEMV_QUANT_##KIND(F, x + k0, kc);                                                            \
      for (size_t n = n0; n < n1; n++) {                                                           \
        const uint8_t *row = w + n * rb;                                                           \
        v16f acc[GEMV_NACC_##KIND];                                                                \
        for (int i = 0; i < GEMV_NACC_##KIND; i++) acc[i] = _mm512_setzero_ps();                   \
        __m256 off = _mm256_setzero_ps();                                                          \
        for (size_t v = 0; v < nu; v++) {                                                          \
          size_t u = k0 / 256 + v, nb = v + 1 < nu ? 8 : nbl;                                      \
          GEMV_PREFETCH_##KIND(row + v * pfs + pfo, pfs);                                          \
          GEMV_UNIT_##KIND(F, row, u, v, nb, acc, off)                                             \
        }                                                                                          \
        v16f s = _mm512_add_ps(acc[0], acc[1]);                                                    \
        if (GEMV_NACC_##KIND == 4) s = _mm512_add_ps(s, _mm512_add_ps(acc[2], acc[3]));            \
        float r = _mm512_reduce_add_ps(s) + hsum8(off);                                            \
        y[n] = k0 ? y[n] + r : r;                                                                  \
      }                                                                                            \
    }                                                                                              \
  }

#define INT8_GEMM(NAME, F)                                                                         \
  /* NAME_gemm: M >= 2 tokens, columns [n0, n1) (see i8_micro). */                              \
  static __attribute__((noinline)) void NAME##_gemm(const float *x, const uint8_t *w, float *y,    \
                                                     size_t ld, size_t M, size_t n0, size_t n1,    \
                                                     size_t K, size_t rb) {                        \
    i8_act a;                                                                                      \
    i8_wtile wt;                                                                                   \
    size_t nu = (K + 255) / 256, pfs = (rb + nu - 1) / nu;                                         \
    for (size_t m0 = 0; m0 < M; m0 += I8_MC) {                                                     \
      size_t mc = M - m0 < I8_MC ? M - m0 : I8_MC;                                                 \
      for (size_t u = 0; u < nu; u++) {                                                            \
        size_t nb = K / 32 - 8 * u < 8 ? K / 32 - 8 * u : 8;                                       \
        for (size_t t = 0; t < mc; t++) i8_quantize(x + (m0 + t) * K + 256 * u, nb, C_##F, &a, t); \
        for (size_t r0 = n0; r0 < n1; r0 += I8_NR) {                                               \
          size_t nr = n1 - r0 < I8_NR ? n1 - r0 : I8_NR;                                           \
          v16f sc[16], mn[16];                                                                     \
          for (size_t r = 0; r < 16; r++) {                                                        \
            sc[r] = mn[r] = _mm512_setzero_ps();                                                   \
            if (r >= nr) continue;                                                                 \
            const uint8_t *row = w + (r0 + r) * rb;                                                \
            if (u + 1 < nu) prefetch_span(row + (u + 1) * pfs, pfs);                               \
            wunit wu;                                                                              \
            UNIT_##F(row, u, nb, wu);                                                              \
            sc[r] = wu.sc16, mn[r] = _mm512_castps256_ps512(wu.min8);                              \
            mn[r] = _mm512_mask_blend_ps(0xff00, mn[r], _mm512_setzero_ps());                      \
          }                                                                                        \
          transpose16(sc);                                                                         \
          transpose16(mn);                                                                         \
          for (size_t j = 0; j < 16; j++) wt.sc[j] = sc[j];                                        \
          for (size_t b = 0; b < 8; b++) wt.mn[b] = mn[b];                                         \
          for (size_t p = 0; 2 * p < nb; p++) {                                                    \
            __m512i c[16];                                                                         \
            for (size_t r = 0; r < 16; r++) {                                                      \
              size_t g = 8 * u + 2 * p;                                                            \
              c[r] = r < nr ? PAIR_##F(w + (r0 + r) * rb, g, 2 * p + 1 < nb ? g + 1 : g)           \
                            : _mm512_setzero_si512();                                              \
            }                                                                                      \
            transpose16((v16f *)c);                                                                \
            for (size_t j = 0; j < 16; j++) wt.c[16 * p + j] = c[j];                               \
          }                                                                                        \
          __mmask16 rows = (__mmask16)(nr == 16 ? 0xffff : (1u << nr) - 1);                        \
          float *yt = y + m0 * ld + r0;                                                            \
          size_t t = 0;                                                                            \
          for (; t + I8_MR <= mc; t += I8_MR) i8_micro(&a, t, I8_MR, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); \
          switch (mc - t) { /* the last tokens, as one tile */                                     \
          case 7: i8_micro(&a, t, 7, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          case 6: i8_micro(&a, t, 6, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          case 5: i8_micro(&a, t, 5, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          case 4: i8_micro(&a, t, 4, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          case 3: i8_micro(&a, t, 3, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          case 2: i8_micro(&a, t, 2, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          case 1: i8_micro(&a, t, 1, &wt, nb, HAS_MIN_##F, SUB16_##F, yt, ld, rows, u == 0); break;            \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

#define INT8_KERNEL(NAME, F, ROW_BYTES, KIND)                                                     \
  INT8_GEMV(NAME, F, KIND)                                                                         \
  INT8_GEMM(NAME, F)                                                                               \
  static void NAME##_rows(const float *x, const uint8_t *w, float *y, size_t ld, size_t M,         \
                          size_t n0, size_t n1, size_t K) {                                        \
    size_t rb = ROW_BYTES;                                                                         \
    if (M == 1) {                                                                                  \
      NAME##_gemv(x, w, y, n0, n1, K, rb);                                                         \
      return;                                                                                      \
    }                                                                                              \
    NAME##_gemm(x, w, y, ld, M, n0, n1, K, rb);                                                    \
  }                                                                                                \
  KERNEL_ENTRIES(NAME)

INT8_KERNEL(archc_mm_q8_0, Q8_0, K / 32 * 34, PAIRS)
INT8_KERNEL(archc_mm_q4_0, Q4_0, K / 32 * 18, G32)
INT8_KERNEL(archc_mm_q4_1, Q4_1, K / 32 * 20, G32)
INT8_KERNEL(archc_mm_q5_0, Q5_0, K / 32 * 22, PAIRS)
INT8_KERNEL(archc_mm_q5_1, Q5_1, K / 32 * 24, PAIRS)
INT8_KERNEL(archc_mm_q4_k, Q4_K, K / 256 * 144, K4)
INT8_KERNEL(archc_mm_q5_k, Q5_K, K / 256 * 176, K4)
INT8_KERNEL(archc_mm_q6_k, Q6_K, K / 256 * 210, PAIRS)
