// archc's hand-written CPU kernels: y = x · Wᵀ for a weight W stored as
// its checkpoint stores it (GGUF block-quantized, f16 or bf16), with f32
// activations and f32 accumulation. They enter the compiled module as IREE
// custom dispatches (lower/kernel.go): IREE's LLVM links this file's
// bitcode into the dispatch and compiles it for the host CPU.
//
// Requirements: x86-64 with AVX2, FMA and F16C. Built freestanding (no
// libc, no globals with state); every function is reentrant.
//
// Signature of every kernel (IREE passes each memref as a base pointer and
// an element offset, and each index as size_t):
//
//   archc_mm_<format>(const float *x, size_t xo,      // [M, K] f32
//                     const uint8_t *w, size_t wo,    // [N, row bytes] stored rows
//                     float *y, size_t yo,            // [M, N] f32
//                     size_t M, size_t N, size_t K, size_t wg)
//
// Workgroup wg computes output columns n in [wg·ROWS, min(N, (wg+1)·ROWS))
// for every token m. K is a multiple of the format's block size and at most
// MAX_K.
//
// Numerics: each weight row is decoded block by block into f32 exactly as
// ggml's dequantize_row_* decodes it, except that a block's offset (Q4_1,
// Q5_1's m; K-quants' dmin·m) and scale are factored out of the dot product:
// Σ_j (d·q_j + m)·x_j = d·Σ_j q_j·x_j + m·Σ_j x_j. Every term is f32; only
// the rounding order differs from dequantize-then-matmul (the plain
// lowering), within a few f32 ulps of the dot product (tested against it).
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

// ARCHC_ROWS (output columns per workgroup) and ARCHC_MAX_K (longest row,
// which bounds the per-token block sums on the stack) come from the build
// (driver/kernels.Rows, MaxK), so the dispatch and the kernel agree.
#if !defined(ARCHC_ROWS) || !defined(ARCHC_MAX_K)
#error "build with -DARCHC_ROWS=... -DARCHC_MAX_K=... (driver/kernels does)"
#endif
#define ROWS ARCHC_ROWS
#define MAX_K ARCHC_MAX_K
#define MT 4 // tokens processed together (weights decoded once per MT)

#include "entries.h"

typedef __m256 v8f;

static inline float f16(const uint8_t *p) {
  uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
  return _cvtsh_ss(h);
}

static inline float hsum(v8f v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

static inline v8f u8x8(__m128i b) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)); }
static inline v8f i8x8(__m128i b) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)); }

// dot32 returns the 8-lane partial sums of q[0..31]·x[0..31].
static inline v8f dot32(const v8f q[4], const float *x) {
  v8f s = _mm256_mul_ps(q[0], _mm256_loadu_ps(x));
  s = _mm256_fmadd_ps(q[1], _mm256_loadu_ps(x + 8), s);
  s = _mm256_fmadd_ps(q[2], _mm256_loadu_ps(x + 16), s);
  return _mm256_fmadd_ps(q[3], _mm256_loadu_ps(x + 24), s);
}

// Unpacks 16 bytes of nibbles (GGUF order: byte j holds element j in the
// low nibble and element j+16 in the high one) into 32 byte values.
static inline void nibbles(const uint8_t *qs, __m128i *lo, __m128i *hi) {
  __m128i b = _mm_loadu_si128((const __m128i *)qs);
  __m128i m4 = _mm_set1_epi8(0x0f);
  *lo = _mm_and_si128(b, m4);
  *hi = _mm_and_si128(_mm_srli_epi16(b, 4), m4);
}

static inline void bytes32_u(__m128i lo, __m128i hi, v8f q[4]) {
  q[0] = u8x8(lo);
  q[1] = u8x8(_mm_srli_si128(lo, 8));
  q[2] = u8x8(hi);
  q[3] = u8x8(_mm_srli_si128(hi, 8));
}

static inline void bytes32_s(__m128i lo, __m128i hi, v8f q[4]) {
  q[0] = i8x8(lo);
  q[1] = i8x8(_mm_srli_si128(lo, 8));
  q[2] = i8x8(hi);
  q[3] = i8x8(_mm_srli_si128(hi, 8));
}

// Bit j of the 32-bit little-endian word at p, as 0x10 in byte j (the 5th
// bit of Q5_0/Q5_1 element j), for j in 0..15 (lo) and 16..31 (hi).
static inline void high_bits(const uint8_t *p, __m128i *lo, __m128i *hi) {
  uint32_t qh = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
  const __m128i sel = _mm_set_epi8(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m128i bit = _mm_set_epi8(-128, 64, 32, 16, 8, 4, 2, 1, -128, 64, 32, 16, 8, 4, 2, 1);
  __m128i w = _mm_cvtsi32_si128((int)qh);
  __m128i l = _mm_shuffle_epi8(w, sel);
  __m128i h = _mm_shuffle_epi8(w, _mm_add_epi8(sel, _mm_set1_epi8(2)));
  __m128i x10 = _mm_set1_epi8(0x10);
  *lo = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(l, bit), bit), x10);
  *hi = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(h, bit), bit), x10);
}

// Weights are prefetched as one stream, PREFETCH_DIST bytes ahead of the
// group being decoded (a workgroup's rows are contiguous, so the stream runs
// on into the next row): with the hardware prefetcher alone the kernels
// wait on memory (2.3x slower on the whole SmolLM2 weight set, measured on a
// Sapphire Rapids host with the weights in L3), and whole rows prefetched at
// a time are bursts the miss queue drops (matmul_avx512.c has the figures;
// this file's Q4_0 decode of 2048 rows of K=8192 on the same Zen 4 went
// from 4.9 to 7.2 GB/s).
#define PREFETCH_DIST 2048

// prefetch_span prefetches the n bytes from p (every 64-byte line).
static inline void prefetch_span(const uint8_t *p, size_t n) {
  for (size_t o = 0; o < n; o += 64) _mm_prefetch((const char *)(p + o), _MM_HINT_T0);
}

// xsums[t][g] = Σ x[t][32g .. 32g+31], for the tokens of one tile.
static void block_sums(const float *x, size_t K, size_t mt, float xs[MT][MAX_K / 32]) {
  for (size_t t = 0; t < mt; t++) {
    for (size_t g = 0; g < K / 32; g++) {
      const float *p = x + t * K + 32 * g;
      v8f s = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)),
                            _mm256_add_ps(_mm256_loadu_ps(p + 16), _mm256_loadu_ps(p + 24)));
      xs[t][g] = hsum(s);
    }
  }
}

// A decoded 32-element group: w_j = a·q_j + c.
typedef struct {
  v8f q[4];
  float a, c;
} group;

// Prefill (M >= GEMM_MIN_M tokens) runs as an outer-product GEMM, as in
// matmul_avx512.c: a tile of GEMM_NR weight rows is decoded once per
// GEMM_KC-element chunk of K into wt[k][row] (w_j = a·q_j + c in one FMA,
// transposed in registers), and GEMM_MR tokens at a time accumulate
// y[m][rows] += x[m][k] · wt[k][rows] with each x element broadcast once for
// the tile's rows (12 accumulators of the 16 ymm registers). Each output is
// one sequential FMA chain over k, carried through y between chunks; the
// weights differ from ggml's d·q + m by at most the rounding of that one
// FMA, within the tests' bound like the factored scales below.
#define GEMM_NR 16  // weight rows per tile: two vectors
#define GEMM_MR 6   // tokens per micro-tile
#define GEMM_KC 128 // K elements per decoded chunk: wt is 8 KiB
// From 12 tokens on, the GEMM beats the MT tiles below: measured on a
// 2-core Zen 4 (EPYC), one thread, 64 rows, q5_0 K=2048 / q4_k K=1024 /
// q8_0 K=640: M=8 19.8 / 20.9 / 22.0 GMAC/s against the tiles' 21.6 / 23.8 /
// 30.0; M=12 29.6 / 31.3 / 33.0 against 21.6 / 23.6 / 29.9; M=64 46-48
// against 20-30 for every format.
#define GEMM_MIN_M 12

// transpose8 transposes the 8x8 f32 matrix whose rows are r[0..7].
static inline void transpose8(v8f r[8]) {
  v8f t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane j: column 4j + c of rows 4i .. 4i+3.
  for (int i = 0; i < 2; i++) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int c = 0; c < 4; c++) {
    r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
    r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
  }
}

// gemm_chunk adds Σ_{k<kc} x[m][k0+k]·wt[k][0..nr) to y[m][n0..n0+nr) (row
// stride ld) for every token m < M, starting from zero when first; wt is
// [kc][GEMM_NR], x is [M][K]. A last micro-tile of fewer than GEMM_MR
// tokens repeats token M-1 in its spare rows and stores only the real ones;
// a tile of fewer than GEMM_NR rows goes through a local row.
static void gemm_chunk(const float *x, size_t K, size_t k0, size_t kc, const float *wt, float *y, size_t ld,
                       size_t M, size_t n0, size_t nr, int first) {
  for (size_t m0 = 0; m0 < M; m0 += GEMM_MR) {
    size_t mr = M - m0 < GEMM_MR ? M - m0 : GEMM_MR;
    const float *xr[GEMM_MR];
    v8f a[GEMM_MR][2];
    for (size_t t = 0; t < GEMM_MR; t++) {
      size_t m = t < mr ? m0 + t : M - 1;
      xr[t] = x + m * K + k0;
      float part[GEMM_NR] __attribute__((aligned(32))) = {0};
      const float *yr = y + m * ld + n0;
      if (!first && nr < GEMM_NR) {
        for (size_t j = 0; j < nr; j++) part[j] = yr[j];
        yr = part;
      }
      a[t][0] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(yr);
      a[t][1] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(yr + 8);
    }
    for (size_t k = 0; k < kc; k++) {
      v8f w0 = _mm256_load_ps(wt + GEMM_NR * k), w1 = _mm256_load_ps(wt + GEMM_NR * k + 8);
      for (size_t t = 0; t < GEMM_MR; t++) {
        v8f b = _mm256_broadcast_ss(xr[t] + k);
        a[t][0] = _mm256_fmadd_ps(w0, b, a[t][0]);
        a[t][1] = _mm256_fmadd_ps(w1, b, a[t][1]);
      }
    }
    for (size_t t = 0; t < mr; t++) {
      float *yr = y + (m0 + t) * ld + n0;
      if (nr == GEMM_NR) {
        _mm256_storeu_ps(yr, a[t][0]);
        _mm256_storeu_ps(yr + 8, a[t][1]);
      } else {
        float part[GEMM_NR] __attribute__((aligned(32)));
        _mm256_store_ps(part, a[t][0]);
        _mm256_store_ps(part + 8, a[t][1]);
        for (size_t j = 0; j < nr; j++) yr[j] = part[j];
      }
    }
  }
}

// The driver shared by every 32-element-group format. DECODE(row, g, grp)
// fills grp for group g of a row. NAME_rows computes columns [n0, n1) of
// y (row stride ld) from weight rows w; the exported kernels:
//   NAME(x, w, y, M, N, K, wg): y [M, N], workgroup wg computes columns
//     [wg·ROWS, (wg+1)·ROWS);
//   NAME3(x, w1, w2, w3, y, M, N1, N2, N3, K, wg): three weights that read
//     the same x (a layer's q, k, v or gate, up; N3 may be 0) in one
//     dispatch, y [M, N1+N2+N3] their outputs side by side; workgroups
//     cover ceil(N1/ROWS) + ceil(N2/ROWS) + ceil(N3/ROWS).
#define GROUP_KERNEL(NAME, ROW_BYTES, DECODE)                                                        \
  static void NAME##_rows(const float *x, const uint8_t *w, float *y, size_t ld, size_t M,        \
                          size_t n0, size_t n1, size_t K) {                                        \
    /* gb: a group's bytes, rounded up (Q6_K) */                                                   \
    size_t rb = ROW_BYTES, G = K / 32, gb = (rb + G - 1) / G;                                      \
    if (M >= GEMM_MIN_M) {                                                                         \
      float wt[GEMM_KC * GEMM_NR] __attribute__((aligned(32)));                                    \
      for (size_t r0 = n0; r0 < n1; r0 += GEMM_NR) {                                               \
        size_t nr = n1 - r0 < GEMM_NR ? n1 - r0 : GEMM_NR;                                         \
        for (size_t k0 = 0; k0 < K; k0 += GEMM_KC) {                                               \
          size_t kc = K - k0 < GEMM_KC ? K - k0 : GEMM_KC;                                         \
          for (size_t h = 0; h < GEMM_NR / 8; h++) {                                               \
            for (size_t g = k0 / 32; g < (k0 + kc) / 32; g++) {                                    \
              v8f e[4][8];                                                                         \
              for (size_t r = 0; r < 8; r++) {                                                     \
                size_t n = r0 + 8 * h + r;                                                         \
                group grp;                                                                         \
                if (n < r0 + nr) {                                                                 \
                  DECODE((w + n * rb), g, grp);                                                    \
                } else {                                                                           \
                  grp.q[0] = grp.q[1] = grp.q[2] = grp.q[3] = _mm256_setzero_ps();                 \
                  grp.a = grp.c = 0;                                                               \
                }                                                                                  \
                v8f ga = _mm256_set1_ps(grp.a), gc = _mm256_set1_ps(grp.c);                        \
                for (int j = 0; j < 4; j++) e[j][r] = _mm256_fmadd_ps(ga, grp.q[j], gc);           \
              }                                                                                    \
              float *d = wt + GEMM_NR * (32 * g - k0) + 8 * h;                                     \
              for (int j = 0; j < 4; j++) {                                                        \
                transpose8(e[j]);                                                                  \
                for (int i = 0; i < 8; i++) _mm256_store_ps(d + GEMM_NR * (8 * j + i), e[j][i]);   \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
          gemm_chunk(x, K, k0, kc, wt, y, ld, M, r0, nr, k0 == 0);                                 \
        }                                                                                          \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    float xs[MT][MAX_K / 32];                                                                      \
    for (size_t m0 = 0; m0 < M; m0 += MT) {                                                        \
      size_t mt = M - m0 < MT ? M - m0 : MT;                                                       \
      const float *xt = x + m0 * K;                                                                \
      block_sums(xt, K, mt, xs);                                                                   \
      for (size_t n = n0; n < n1; n++) {                                                           \
        const uint8_t *row = w + n * rb;                                                           \
        v8f acc[MT];                                                                               \
        float off[MT];                                                                             \
        for (size_t t = 0; t < MT; t++) {                                                          \
          acc[t] = _mm256_setzero_ps();                                                            \
          off[t] = 0;                                                                              \
        }                                                                                          \
        for (size_t g = 0; g < G; g++) {                                                           \
          group grp;                                                                               \
          prefetch_span(row + g * gb + PREFETCH_DIST, gb);                                         \
          DECODE(row, g, grp);                                                                     \
          v8f a = _mm256_set1_ps(grp.a);                                                           \
          for (size_t t = 0; t < mt; t++) {                                                        \
            acc[t] = _mm256_fmadd_ps(a, dot32(grp.q, xt + t * K + 32 * g), acc[t]);                \
            off[t] += grp.c * xs[t][g];                                                            \
          }                                                                                        \
        }                                                                                          \
        for (size_t t = 0; t < mt; t++) y[(m0 + t) * ld + n] = hsum(acc[t]) + off[t];              \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  KERNEL_ENTRIES(NAME)

// Q8_0: 34-byte blocks {f16 d; int8 q[32]}, w = d·q.
#define DECODE_Q8_0(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 34 * g;                                               \
    grp.a = f16(b), grp.c = 0;                                                     \
    grp.q[0] = i8x8(_mm_loadl_epi64((const __m128i *)(b + 2)));                    \
    grp.q[1] = i8x8(_mm_loadl_epi64((const __m128i *)(b + 10)));                   \
    grp.q[2] = i8x8(_mm_loadl_epi64((const __m128i *)(b + 18)));                   \
    grp.q[3] = i8x8(_mm_loadl_epi64((const __m128i *)(b + 26)));                   \
  } while (0)
GROUP_KERNEL(archc_mm_q8_0, K / 32 * 34, DECODE_Q8_0)

// Q4_0: 18-byte blocks {f16 d; u8 qs[16]}, w = d·(q - 8).
#define DECODE_Q4_0(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 18 * g;                                               \
    __m128i lo, hi;                                                                \
    nibbles(b + 2, &lo, &hi);                                                      \
    __m128i e8 = _mm_set1_epi8(8);                                                 \
    bytes32_s(_mm_sub_epi8(lo, e8), _mm_sub_epi8(hi, e8), grp.q);                  \
    grp.a = f16(b), grp.c = 0;                                                     \
  } while (0)
GROUP_KERNEL(archc_mm_q4_0, K / 32 * 18, DECODE_Q4_0)

// Q4_1: 20-byte blocks {f16 d, m; u8 qs[16]}, w = d·q + m.
#define DECODE_Q4_1(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 20 * g;                                               \
    __m128i lo, hi;                                                                \
    nibbles(b + 4, &lo, &hi);                                                      \
    bytes32_u(lo, hi, grp.q);                                                      \
    grp.a = f16(b), grp.c = f16(b + 2);                                            \
  } while (0)
GROUP_KERNEL(archc_mm_q4_1, K / 32 * 20, DECODE_Q4_1)

// Q5_0: 22-byte blocks {f16 d; u32 qh; u8 qs[16]}, w = d·((q | h<<4) - 16).
#define DECODE_Q5_0(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 22 * g;                                               \
    __m128i lo, hi, hl, hh;                                                        \
    nibbles(b + 6, &lo, &hi);                                                      \
    high_bits(b + 2, &hl, &hh);                                                    \
    __m128i e16 = _mm_set1_epi8(16);                                               \
    bytes32_s(_mm_sub_epi8(_mm_or_si128(lo, hl), e16),                             \
              _mm_sub_epi8(_mm_or_si128(hi, hh), e16), grp.q);                     \
    grp.a = f16(b), grp.c = 0;                                                     \
  } while (0)
GROUP_KERNEL(archc_mm_q5_0, K / 32 * 22, DECODE_Q5_0)

// Q5_1: 24-byte blocks {f16 d, m; u32 qh; u8 qs[16]}, w = d·(q | h<<4) + m.
#define DECODE_Q5_1(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 24 * g;                                               \
    __m128i lo, hi, hl, hh;                                                        \
    nibbles(b + 8, &lo, &hi);                                                      \
    high_bits(b + 4, &hl, &hh);                                                    \
    bytes32_u(_mm_or_si128(lo, hl), _mm_or_si128(hi, hh), grp.q);                  \
    grp.a = f16(b), grp.c = f16(b + 2);                                            \
  } while (0)
GROUP_KERNEL(archc_mm_q5_1, K / 32 * 24, DECODE_Q5_1)

// K-quant 6-bit scale and min of sub-block j (ggml's get_scale_min_k4).
static inline void scale_min_k4(int j, const uint8_t *q, float *sc, float *m) {
  if (j < 4) {
    *sc = (float)(q[j] & 63), *m = (float)(q[j + 4] & 63);
  } else {
    *sc = (float)((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *m = (float)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Q4_K: 144-byte super-blocks of 256 {f16 d, dmin; u8 scales[12]; u8 qs[128]};
// sub-block i (32 elements) has w = (d·sc_i)·q - dmin·m_i; qs byte l of
// 32-byte chunk c holds sub-block 2c (low nibble) and 2c+1 (high nibble).
#define DECODE_Q4_K(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 144 * (g / 8);                                        \
    int i = (int)(g % 8);                                                          \
    float sc, mn;                                                                  \
    scale_min_k4(i, b + 4, &sc, &mn);                                              \
    const uint8_t *q = b + 16 + 32 * (i / 2);                                      \
    __m256i v = _mm256_loadu_si256((const __m256i *)q);                            \
    if (i & 1) v = _mm256_srli_epi16(v, 4);                                        \
    v = _mm256_and_si256(v, _mm256_set1_epi8(0x0f));                               \
    bytes32_u(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1), grp.q);   \
    /* bytes32_u takes elements 0..15 then 16..31 */                               \
    grp.a = f16(b) * sc, grp.c = -(f16(b + 2) * mn);                               \
  } while (0)
GROUP_KERNEL(archc_mm_q4_k, K / 256 * 144, DECODE_Q4_K)

// Q5_K: 176-byte super-blocks {f16 d, dmin; u8 scales[12]; u8 qh[32];
// u8 qs[128]}: as Q4_K with a 5th bit, bit i of qh[l] for sub-block i.
#define DECODE_Q5_K(row, g, grp)                                                   \
  do {                                                                             \
    const uint8_t *b = row + 176 * (g / 8);                                        \
    int i = (int)(g % 8);                                                          \
    float sc, mn;                                                                  \
    scale_min_k4(i, b + 4, &sc, &mn);                                              \
    const uint8_t *q = b + 48 + 32 * (i / 2);                                      \
    __m256i v = _mm256_loadu_si256((const __m256i *)q);                            \
    if (i & 1) v = _mm256_srli_epi16(v, 4);                                        \
    v = _mm256_and_si256(v, _mm256_set1_epi8(0x0f));                               \
    __m256i h = _mm256_loadu_si256((const __m256i *)(b + 16));                     \
    __m256i bit = _mm256_set1_epi8((char)(1 << i));                                \
    h = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h, bit), bit),         \
                         _mm256_set1_epi8(0x10));                                  \
    v = _mm256_or_si256(v, h);                                                     \
    bytes32_u(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1), grp.q);   \
    grp.a = f16(b) * sc, grp.c = -(f16(b + 2) * mn);                               \
  } while (0)
GROUP_KERNEL(archc_mm_q5_k, K / 256 * 176, DECODE_Q5_K)

// Q6_K: 210-byte super-blocks of 256 {u8 ql[128]; u8 qh[64]; i8 sc[16];
// f16 d}; element groups of 16 with w = (d·sc)·(q - 32). Decoded per
// 32-element group as two halves with their own scales, so the group
// carries the scales in q (a = 1): exact, since d·sc is applied to the
// integer q before the dot product as in ggml.
static inline void decode_q6_k(const uint8_t *row, size_t g, group *grp) {
  const uint8_t *b = row + 210 * (g / 8);
  int i = (int)(g % 8);      // 32-element group within the super-block
  int half = i / 4, k = i % 4; // 128-element half; quarter within it
  const uint8_t *ql = b + 64 * half + 32 * (k & 1);
  const uint8_t *qh = b + 128 + 32 * half;
  __m256i l = _mm256_loadu_si256((const __m256i *)ql);
  if (k >= 2) l = _mm256_srli_epi16(l, 4);
  l = _mm256_and_si256(l, _mm256_set1_epi8(0x0f));
  __m256i h = _mm256_loadu_si256((const __m256i *)qh);
  h = _mm256_srli_epi16(h, 2 * k);
  h = _mm256_and_si256(h, _mm256_set1_epi8(3));
  __m256i q = _mm256_sub_epi8(_mm256_or_si256(l, _mm256_slli_epi16(h, 4)), _mm256_set1_epi8(32));
  v8f f[4];
  bytes32_s(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1), f);
  float d = f16(b + 208);
  const int8_t *sc = (const int8_t *)(b + 192) + 8 * half + k * 2;
  float s0 = d * (float)sc[0], s1 = d * (float)sc[1];
  v8f a0 = _mm256_set1_ps(s0), a1 = _mm256_set1_ps(s1);
  grp->q[0] = _mm256_mul_ps(a0, f[0]);
  grp->q[1] = _mm256_mul_ps(a0, f[1]);
  grp->q[2] = _mm256_mul_ps(a1, f[2]);
  grp->q[3] = _mm256_mul_ps(a1, f[3]);
  grp->a = 1, grp->c = 0;
}
#define DECODE_Q6_K(row, g, grp) decode_q6_k(row, g, &grp)
GROUP_KERNEL(archc_mm_q6_k, K / 256 * 210, DECODE_Q6_K)

// F16: rows of K halves, w = f32(h).
#define DECODE_F16(row, g, grp)                                                    \
  do {                                                                             \
    const __m128i *p = (const __m128i *)(row + 64 * g);                            \
    for (int j = 0; j < 4; j++) grp.q[j] = _mm256_cvtph_ps(_mm_loadu_si128(p + j)); \
    grp.a = 1, grp.c = 0;                                                          \
  } while (0)
GROUP_KERNEL(archc_mm_f16, K * 2, DECODE_F16)

// BF16: rows of K bfloat16, w = f32(bits << 16).
#define DECODE_BF16(row, g, grp)                                                   \
  do {                                                                             \
    const __m128i *p = (const __m128i *)(row + 64 * g);                            \
    for (int j = 0; j < 4; j++)                                                    \
      grp.q[j] = _mm256_castsi256_ps(                                              \
          _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(p + j)), 16));   \
    grp.a = 1, grp.c = 0;                                                          \
  } while (0)
GROUP_KERNEL(archc_mm_bf16, K * 2, DECODE_BF16)
