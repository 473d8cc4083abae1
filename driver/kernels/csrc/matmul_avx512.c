// archc's hand-written CPU kernels, AVX-512 variant: y = x · Wᵀ for a
// weight W stored as its checkpoint stores it (GGUF block-quantized, f16 or
// bf16), with f32 activations and f32 accumulation. Same ABI and rules as
// matmul_avx2.c (read its header first). Differences: 16 lanes per
// instruction instead of 8; each block is decoded to its f32 weights
// exactly as ggml's dequantize_row_* computes them (for 4- and 5-bit codes
// a 16- or 32-entry table d·code + m per block, looked up with
// vpermps/vpermt2ps; 5th bits through mask registers), so no scale or
// offset is factored out and the only difference from the plain lowering
// (dequantize, then dot_general) is the summation order.
//
// Requirements: x86-64 with AVX-512 F, BW, VL and DQ, plus F16C and FMA
// (every AVX-512 CPU has them). Built freestanding (no libc, no globals
// with state); every function is reentrant.
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(ARCHC_ROWS) || !defined(ARCHC_MAX_K)
#error "build with -DARCHC_ROWS=... -DARCHC_MAX_K=... (driver/kernels does)"
#endif
#define ROWS ARCHC_ROWS
#define MAX_K ARCHC_MAX_K
// Tokens processed together (weights decoded once per MT): 8 tokens' two
// accumulators each fill half the 32 vector registers; 8 measured 1.1-1.5x
// faster than 4 in prefill (K-quants most) on a Sapphire Rapids host.
#define MT 8

typedef __m512 v16f;

static inline float f16(const uint8_t *p) {
  uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
  return _cvtsh_ss(h);
}

// Tables of exact code values for the vpermps lookups.
static inline v16f iota16(float base) {
  return _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_ps(base));
}

// lookup16 is vpermps: lane i of the result is lane idx[i] & 15 of t. As
// asm because clang emits _mm512_permutexvar_ps as the integer-domain
// vpermd, whose result then crosses to the FMAs: on Zen 4 (EPYC), one
// thread, the Q4_0 single-token kernel ran 1.25x faster with vpermps
// (24.5 against 19.5 GMAC/s, 256 rows of K=2048 in L2).
static inline __m512 lookup16(__m512i idx, __m512 t) {
  __m512 r;
  __asm__("vpermps %2, %1, %0" : "=v"(r) : "v"(idx), "v"(t));
  return r;
}

// 16 bytes as 16 dword lanes (zero-extended).
static inline __m512i u8x16(const uint8_t *p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)); }

// Weights are prefetched as one stream, PREFETCH_DIST bytes ahead of the
// group being decoded: a workgroup's rows are contiguous, so the stream runs
// on into the next row. The hardware prefetcher alone leaves the kernels
// waiting on memory (2x slower measured on a Sapphire Rapids host), and
// prefetching a whole row at a time, two rows ahead, is a burst of up to
// 72 lines that the core's miss queue does not hold: measured on a 2-core
// Zen 4 (EPYC), one thread, Q4_0 decode with the weights past L3, 2048 rows
// of K=8192 went from 5.9 to 9.6 GB/s and 8192 rows of K=2048 from 9.8 to
// 11.0 with the stream (1, 2 and 4 KiB ahead within 5 %).
#define PREFETCH_DIST 2048

// prefetch_span prefetches the n bytes from p (every 64-byte line).
static inline void prefetch_span(const uint8_t *p, size_t n) {
  for (size_t o = 0; o < n; o += 64) _mm_prefetch((const char *)(p + o), _MM_HINT_T0);
}

// prefetch_short prefetches the n bytes from p with at most three
// prefetches and no loop for n <= 128 (a span of at most 128 bytes touches
// at most three lines: those of p, p + 64 and p + n - 1): the single-token
// loop prefetches one or two groups per step, and prefetch_span's loop over
// a byte count known only at run time cost the Q4_0 kernel a quarter of
// its speed (Zen 4, one thread: 18.1 against 23.1 GMAC/s).
static inline void prefetch_short(const uint8_t *p, size_t n) {
  _mm_prefetch((const char *)p, _MM_HINT_T0);
  _mm_prefetch((const char *)(p + n - 1), _MM_HINT_T0);
  if (n > 64) {
    _mm_prefetch((const char *)(p + 64), _MM_HINT_T0);
    if (n > 128) prefetch_span(p + 128, n - 128);
  }
}

// A decoded 32-element group: its f32 weights, elements 0..15 and 16..31.
typedef struct {
  v16f w[2];
} group;

// Prefill (M >= GEMM_MIN_M tokens) runs as an outer-product GEMM: a tile of
// GEMM_NR weight rows is decoded once per GEMM_KC-element chunk of K into
// wt[k][row] (k-major, transposed in registers), and GEMM_MR tokens at a
// time accumulate y[m][rows] += x[m][k] · wt[k][rows], each x element
// broadcast once for the tile's rows. So a group is decoded once for all M
// tokens (not once per 8), no x vector is loaded per FMA, and no horizontal
// sum is needed. Each output is one sequential FMA chain over k (carried
// through y between chunks, exact in f32), so the result differs from the
// plain lowering only in summation order, like the tiles below.
#define GEMM_NR 32  // weight rows per tile: two vectors
#define GEMM_MR 8   // tokens per micro-tile: 16 accumulators
#define GEMM_KC 128 // K elements per decoded chunk: wt is 16 KiB
// From 16 tokens on, the GEMM beats the MT tiles below (decoding and
// transposing a group costs about as much as 8 tokens' FMAs): measured on a
// 2-core Zen 4 (EPYC, AVX-512), one thread, 64 rows, for q5_0 K=2048 / q4_k
// K=1024: M=8 28.1 / 26.0 GMAC/s against the tiles' 26.4 / 37.3; M=16 33.2 /
// 36.0 against 26.3 / 36.9; M=64 51 against 26-43 for every format.
#define GEMM_MIN_M 16

// transpose16 transposes the 16x16 f32 matrix whose rows are r[0..15].
static inline void transpose16(v16f r[16]) {
  v16f t[16], u[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane j: column 4j + c of rows 4i .. 4i+3.
  for (int i = 0; i < 4; i++) {
    __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  // Column 4j + c gathers lane j of u[c], u[4 + c], u[8 + c], u[12 + c].
  for (int c = 0; c < 4; c++) {
    v16f s0 = _mm512_shuffle_f32x4(u[c], u[4 + c], _MM_SHUFFLE(1, 0, 1, 0));
    v16f s1 = _mm512_shuffle_f32x4(u[c], u[4 + c], _MM_SHUFFLE(3, 2, 3, 2));
    v16f s2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], _MM_SHUFFLE(1, 0, 1, 0));
    v16f s3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], _MM_SHUFFLE(3, 2, 3, 2));
    r[c] = _mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + c] = _mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + c] = _mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + c] = _mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

// gemm_chunk adds Σ_{k<kc} x[m][k0+k]·wt[k][0..nr) to y[m][n0..n0+nr) (row
// stride ld) for every token m < M, starting from zero when first; wt is
// [kc][GEMM_NR], x is [M][K]. A last micro-tile of fewer than GEMM_MR
// tokens repeats token M-1 in its spare rows and stores only the real ones.
static void gemm_chunk(const float *x, size_t K, size_t k0, size_t kc, const float *wt, float *y, size_t ld,
                       size_t M, size_t n0, size_t nr, int first) {
  __mmask16 lo = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
  __mmask16 hi = nr >= 32 ? 0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
  for (size_t m0 = 0; m0 < M; m0 += GEMM_MR) {
    size_t mr = M - m0 < GEMM_MR ? M - m0 : GEMM_MR;
    const float *xr[GEMM_MR];
    v16f a[GEMM_MR][2];
    for (size_t t = 0; t < GEMM_MR; t++) {
      size_t m = t < mr ? m0 + t : M - 1;
      xr[t] = x + m * K + k0;
      float *yr = y + m * ld + n0;
      a[t][0] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(lo, yr);
      a[t][1] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(hi, yr + 16);
    }
    for (size_t k = 0; k < kc; k++) {
      v16f w0 = _mm512_load_ps(wt + GEMM_NR * k), w1 = _mm512_load_ps(wt + GEMM_NR * k + 16);
      for (size_t t = 0; t < GEMM_MR; t++) {
        v16f b = _mm512_set1_ps(xr[t][k]);
        a[t][0] = _mm512_fmadd_ps(w0, b, a[t][0]);
        a[t][1] = _mm512_fmadd_ps(w1, b, a[t][1]);
      }
    }
    for (size_t t = 0; t < mr; t++) {
      float *yr = y + (m0 + t) * ld + n0;
      _mm512_mask_storeu_ps(yr, lo, a[t][0]);
      _mm512_mask_storeu_ps(yr + 16, hi, a[t][1]);
    }
  }
}


#ifdef ARCHC_AMX
// AMX-BF16 prefill (the "amx" variant, built with ARCHC_AMX): a linear
// layer of at least the lowering's AMX minimum of tokens runs on the tile
// unit, tdpbf16ps: 16 tokens x 16 weight rows x 32 of K per instruction.
// bf16 holds 8 of an f32's 24 significant bits, so both x and w are split
// exactly into three bf16 parts, v = h + m + l (h the top 8 bits by
// truncation, m the top 8 of the remainder, l the rest: each subtraction is
// exact), and the six products above 2^-24 of the whole (hh, hm, hl, mh,
// mm, lh) are summed into one f32 accumulator per output. The three left out
// (ml, lm, ll) are each below 2^-24·|x·w|, the last bit of an f32 product:
// so each term is the exact product to within 2^-23 relative, as a rounded
// f32 product is, and the sum is f32 as everywhere else (denormal inputs
// and results flush to zero in the tile unit). Products of bf16 values are
// exact in f32.
//
// The activations are split once per layer by archc_split3 (x [M, K] f32
// to s [Mp, 3, K] bf16, Mp = M rounded up to 32, the rows past M zero), so
// a workgroup reads its A tiles straight from s; a workgroup decodes its
// weight rows once per AMX_KC chunk of K into split B tiles (pairs of K
// interleaved, as the tile unit reads B), used by every 32 tokens.
#ifndef AMX_KC
#define AMX_KC 256 // K elements per chunk: B tiles of 32 rows are 48 KiB
#endif
#ifndef AMX_ROWS_WG
#define AMX_ROWS_WG 128
#endif

// The tile configuration (palette 1): eight tiles of 16 rows x 64 bytes:
// 0..3 C (outputs), 4..5 A (tokens), 6..7 B (weight rows).
typedef struct {
  uint8_t palette, start;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} __attribute__((packed)) amx_config;

static inline void amx_begin(void) {
  amx_config c;
  uint8_t *p = (uint8_t *)&c;
  for (size_t i = 0; i < sizeof c; i++) p[i] = 0;
  c.palette = 1;
  for (int t = 0; t < 8; t++) c.colsb[t] = 64, c.rows[t] = 16;
  _tile_loadconfig(&c);
}

// split3 splits 32 f32 (lo: elements 0..15, hi: 16..31) into three rows of
// 32 bf16 in element order, h + m + l = v exactly.
static inline void split3(v16f lo, v16f hi, __m512i out[3]) {
  __m512i top = _mm512_set1_epi32((int)0xffff0000u);
  v16f hl = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(lo), top));
  v16f hh = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(hi), top));
  v16f rl = _mm512_sub_ps(lo, hl), rh = _mm512_sub_ps(hi, hh);
  v16f ml = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(rl), top));
  v16f mh = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(rh), top));
  out[0] = (__m512i)_mm512_cvtne2ps_pbh(hh, hl);
  out[1] = (__m512i)_mm512_cvtne2ps_pbh(mh, ml);
  out[2] = (__m512i)_mm512_cvtne2ps_pbh(_mm512_sub_ps(rh, mh), _mm512_sub_ps(rl, ml));
}

// archc_split3(x, xo, s, so, M, K, wg): workgroup wg writes tokens
// [16·wg, 16·wg + 16) of s, x [M, K] f32 split and laid out as the A tiles
// read it: s [Mp/16][K/32][3][16][32] bf16 bits (token block, step of 32,
// part h/m/l, token, element), zero for tokens past M.
void archc_split3(const float *xb, size_t xo, uint16_t *sb, size_t so, size_t M, size_t K, size_t wg) {
  const float *x = xb + xo;
  uint16_t *s = sb + so + 3 * 16 * K * wg;
  for (size_t t = 0; t < 16; t++) {
    size_t m = 16 * wg + t;
    for (size_t k = 0; k < K; k += 32) {
      __m512i p[3];
      if (m < M) {
        split3(_mm512_loadu_ps(x + m * K + k), _mm512_loadu_ps(x + m * K + k + 16), p);
      } else {
        p[0] = p[1] = p[2] = _mm512_setzero_si512();
      }
      for (int c = 0; c < 3; c++) _mm512_store_si512((__m512i *)(s + (3 * (k / 32) + c) * 512 + 32 * t), p[c]);
    }
  }
}

// AMX_C_LOAD / AMX_C_STORE move C tile T (tokens m0.., rows n0..) between
// y and the tile: directly when all 16x16 are in [0, M) x [.., n1), else
// through cb.
#define AMX_C_LOAD(T, m0, n0)                                                                      \
  do {                                                                                             \
    if (first) {                                                                                   \
      _tile_zero(T);                                                                               \
    } else if ((m0) + 16 <= M && (n0) + 16 <= n1) {                                                \
      _tile_loadd(T, y + (m0) * ld + (n0), ld * 4);                                                \
    } else {                                                                                       \
      for (size_t i = 0; i < 16; i++) {                                                            \
        __mmask16 k = (m0) + i < M && (n0) < n1 ? (__mmask16)(n1 - (n0) >= 16 ? 0xffff : (1u << (n1 - (n0))) - 1) : 0; \
        _mm512_store_ps(cb + 16 * i, _mm512_maskz_loadu_ps(k, y + ((m0) + i) * ld + (n0)));     \
      }                                                                                            \
      _tile_loadd(T, cb, 64);                                                                      \
    }                                                                                              \
  } while (0)
#define AMX_C_STORE(T, m0, n0)                                                                     \
  do {                                                                                             \
    if ((m0) + 16 <= M && (n0) + 16 <= n1) {                                                       \
      _tile_stored(T, y + (m0) * ld + (n0), ld * 4);                                               \
    } else if ((m0) < M && (n0) < n1) {                                                            \
      _tile_stored(T, cb, 64);                                                                     \
      for (size_t i = 0; i < 16 && (m0) + i < M; i++) {                                            \
        __mmask16 k = (__mmask16)(n1 - (n0) >= 16 ? 0xffff : (1u << (n1 - (n0))) - 1);            \
        _mm512_mask_storeu_ps(y + ((m0) + i) * ld + (n0), k, _mm512_load_ps(cb + 16 * i));       \
      }                                                                                            \
    }                                                                                              \
  } while (0)

// amx_block adds the products of K [k0, k0 + 32·steps) to the outputs of
// tokens [m0, m0+32) and rows [n0, n0+32) of y: A tiles from s (as
// archc_split3 lays them out), B tiles b0, b1 (rows n0.., n0+16..;
// [step][part][16 x 32 bf16], wp parts of the weights: 3, or fewer where
// the format's values have at most 16 or 8 significant bits, when the
// parts left out are zero).
static void amx_block(const uint16_t *s, size_t K, size_t k0, const uint16_t *b0, const uint16_t *b1, int wp,
                      size_t steps, float *y, size_t ld, size_t M, size_t m0, size_t n0, size_t n1, int first) {
  float cb[256] __attribute__((aligned(64)));
  AMX_C_LOAD(0, m0, n0);
  AMX_C_LOAD(1, m0, n0 + 16);
  AMX_C_LOAD(2, m0 + 16, n0);
  AMX_C_LOAD(3, m0 + 16, n0 + 16);
  const uint16_t *a0 = s + 3 * K * m0 + 3 * 16 * k0, *a1 = a0 + 3 * 16 * K;
  for (size_t st = 0; st < steps; st++) {
    const uint16_t *p0 = b0 + wp * 512 * st, *p1 = b1 + wp * 512 * st, *q0 = a0 + 3 * 512 * st, *q1 = a1 + 3 * 512 * st;
    // Each weight part c against the activation parts p with p + c < 3
    // (the high part against all three, the middle against h and m, the
    // low against h): a B pair loaded once, A pairs streamed.
    for (int c = 0; c < wp; c++) {
      _tile_loadd(6, p0 + 512 * c, 64);
      _tile_loadd(7, p1 + 512 * c, 64);
      for (int p = 0; p + c < 3; p++) {
        _tile_loadd(4, q0 + 512 * p, 64);
        _tile_loadd(5, q1 + 512 * p, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
  AMX_C_STORE(0, m0, n0);
  AMX_C_STORE(1, m0, n0 + 16);
  AMX_C_STORE(2, m0 + 16, n0);
  AMX_C_STORE(3, m0 + 16, n0 + 16);
}

// AMX_ROWS(NAME, ROW_BYTES, DECODE, WP) defines NAME_amx(s, w, y, ld, M,
// n0, n1, K): columns [n0, n1) (at most AMX_ROWS_WG) of y = x·Wᵀ for every
// token, x split in s, the weights in WP bf16 parts (3; 2 where every value
// of the format has at most 16 significant bits, 1 for bf16); and its entry
// points (entries.h).
#define AMX_ROWS(NAME, ROW_BYTES, DECODE, WP)                                                      \
  static void NAME##_amx(const uint16_t *s, const uint8_t *w, float *y, size_t ld, size_t M,       \
                         size_t n0, size_t n1, size_t K) {                                         \
    size_t rb = ROW_BYTES, blocks = (n1 - n0 + 31) / 32 * 2;                                       \
    uint16_t bt[AMX_ROWS_WG / 16][AMX_KC / 32][WP][512] __attribute__((aligned(64)));          \
    amx_begin();                                                                                   \
    for (size_t k0 = 0; k0 < K; k0 += AMX_KC) {                                                    \
      size_t steps = (K - k0 < AMX_KC ? K - k0 : AMX_KC) / 32;                                     \
      for (size_t j = 0; j < blocks; j++) {                                                        \
        for (size_t st = 0; st < steps; st++) {                                                    \
          __m512i part[3][16];                                                                     \
          for (size_t r = 0; r < 16; r++) {                                                        \
            size_t n = n0 + 16 * j + r;                                                            \
            group grp;                                                                             \
            if (n < n1) {                                                                          \
              DECODE(w + n * rb, k0 / 32 + st, grp);                                               \
            } else {                                                                               \
              grp.w[0] = grp.w[1] = _mm512_setzero_ps();                                           \
            }                                                                                      \
            __m512i p[3];                                                                          \
            split3(grp.w[0], grp.w[1], p);                                                         \
            part[0][r] = p[0], part[1][r] = p[1], part[2][r] = p[2];                               \
          }                                                                                        \
          for (int c = 0; c < WP; c++) {                                                           \
            transpose16((v16f *)part[c]);                                                          \
            for (size_t i = 0; i < 16; i++) _mm512_store_si512((__m512i *)(bt[j][st][c] + 32 * i), part[c][i]); \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
      for (size_t m0 = 0; m0 < M; m0 += 32)                                                        \
        for (size_t j = 0; j < blocks; j += 2)                                                     \
          amx_block(s, K, k0, bt[j][0][0], bt[j + 1][0][0], WP, steps, y, ld, M, m0, n0 + 16 * j, n1, k0 == 0); \
    }                                                                                              \
    _tile_release();                                                                               \
  }                                                                                                \
  KERNEL_ENTRIES_AMX(NAME)
#else
#define AMX_ROWS(NAME, ROW_BYTES, DECODE, WP)
#endif

#include "entries.h"

// no_dot marks a format without a row dot product of its own.
static inline float no_dot(const uint8_t *row, const float *x, size_t G) {
  (void)row, (void)x, (void)G;
  return 0;
}

// The driver shared by every format. DECODE(row, g, grp) fills grp with
// group g of a row. NAME_rows computes columns [n0, n1) of y (row stride
// ld) from weight rows w; the exported kernels are as in matmul_avx2.c:
//   NAME(x, w, y, M, N, K, wg) and NAME3(x, w1, w2, w3, y, M, N1, N2, N3,
//   K, wg).
// A single token (decode) takes two groups per step into four
// accumulators, so the loop is not bound by the latency of one FMA chain;
// a tile of MT tokens decodes each group once and keeps two accumulators
// per token.
#define GROUP_KERNEL(NAME, ROW_BYTES, DECODE, WP) GROUP_KERNEL_DOT(NAME, ROW_BYTES, DECODE, WP, no_dot)
// GROUP_KERNEL_DOT is GROUP_KERNEL whose single-token rows are DOT(row, x,
// G) (a format's own row dot product: the K-quants decode a super-block's
// scales once), unless DOT is no_dot.
#define GROUP_KERNEL_DOT(NAME, ROW_BYTES, DECODE, WP, DOT)                                         \
  static void NAME##_rows(const float *x, const uint8_t *w, float *y, size_t ld, size_t M,         \
                          size_t n0, size_t n1, size_t K) {                                        \
    /* gb: a group's bytes, rounded up (Q6_K) */                                                   \
    size_t rb = ROW_BYTES, G = K / 32, gb = (rb + G - 1) / G;                                      \
    if (M >= GEMM_MIN_M) {                                                                         \
      float wt[GEMM_KC * GEMM_NR] __attribute__((aligned(64)));                                    \
      for (size_t r0 = n0; r0 < n1; r0 += GEMM_NR) {                                               \
        size_t nr = n1 - r0 < GEMM_NR ? n1 - r0 : GEMM_NR;                                         \
        for (size_t k0 = 0; k0 < K; k0 += GEMM_KC) {                                               \
          size_t kc = K - k0 < GEMM_KC ? K - k0 : GEMM_KC;                                         \
          for (size_t h = 0; h < GEMM_NR / 16; h++) {                                              \
            for (size_t g = k0 / 32; g < (k0 + kc) / 32; g++) {                                    \
              v16f lo[16], hi[16];                                                                 \
              for (size_t r = 0; r < 16; r++) {                                                    \
                size_t n = r0 + 16 * h + r;                                                        \
                group grp;                                                                         \
                if (n < r0 + nr) {                                                                 \
                  DECODE(w + n * rb, g, grp);                                                      \
                } else {                                                                           \
                  grp.w[0] = grp.w[1] = _mm512_setzero_ps();                                       \
                }                                                                                  \
                lo[r] = grp.w[0], hi[r] = grp.w[1];                                                \
              }                                                                                    \
              transpose16(lo);                                                                     \
              transpose16(hi);                                                                     \
              float *d = wt + GEMM_NR * (32 * g - k0) + 16 * h;                                    \
              for (size_t j = 0; j < 16; j++) {                                                    \
                _mm512_store_ps(d + GEMM_NR * j, lo[j]);                                           \
                _mm512_store_ps(d + GEMM_NR * (16 + j), hi[j]);                                    \
              }                                                                                    \
            }                                                                                      \
          }                                                                                        \
          gemm_chunk(x, K, k0, kc, wt, y, ld, M, r0, nr, k0 == 0);                                 \
        }                                                                                          \
      }                                                                                            \
      return;                                                                                      \
    }                                                                                              \
    for (size_t m0 = 0; m0 < M; m0 += MT) {                                                        \
      size_t mt = M - m0 < MT ? M - m0 : MT;                                                       \
      const float *xt = x + m0 * K;                                                                \
      if (mt == 1 && DOT != no_dot) {                                                              \
        for (size_t n = n0; n < n1; n++) y[m0 * ld + n] = DOT(w + n * rb, xt, G);                  \
        continue;                                                                                  \
      }                                                                                            \
      if (mt == 1) {                                                                               \
        for (size_t n = n0; n < n1; n++) {                                                         \
          const uint8_t *row = w + n * rb;                                                         \
          v16f a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                \
          size_t g = 0;                                                                            \
          for (; g + 1 < G; g += 2) {                                                              \
            group g0, g1;                                                                          \
            prefetch_short(row + g * gb + PREFETCH_DIST, 2 * gb);                                  \
            DECODE(row, g, g0);                                                                    \
            DECODE(row, g + 1, g1);                                                                \
            const float *xg = xt + 32 * g;                                                         \
            a0 = _mm512_fmadd_ps(g0.w[0], _mm512_loadu_ps(xg), a0);                                \
            a1 = _mm512_fmadd_ps(g0.w[1], _mm512_loadu_ps(xg + 16), a1);                           \
            a2 = _mm512_fmadd_ps(g1.w[0], _mm512_loadu_ps(xg + 32), a2);                           \
            a3 = _mm512_fmadd_ps(g1.w[1], _mm512_loadu_ps(xg + 48), a3);                           \
          }                                                                                        \
          if (g < G) {                                                                             \
            group g0;                                                                              \
            DECODE(row, g, g0);                                                                    \
            a0 = _mm512_fmadd_ps(g0.w[0], _mm512_loadu_ps(xt + 32 * g), a0);                       \
            a1 = _mm512_fmadd_ps(g0.w[1], _mm512_loadu_ps(xt + 32 * g + 16), a1);                  \
          }                                                                                        \
          y[m0 * ld + n] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3))); \
        }                                                                                          \
        continue;                                                                                  \
      }                                                                                            \
      for (size_t n = n0; n < n1; n++) {                                                           \
        const uint8_t *row = w + n * rb;                                                           \
        v16f acc[MT][2];                                                                           \
        for (size_t t = 0; t < MT; t++) acc[t][0] = acc[t][1] = _mm512_setzero_ps();               \
        for (size_t g = 0; g < G; g++) {                                                           \
          group grp;                                                                               \
          prefetch_short(row + g * gb + PREFETCH_DIST, gb);                                        \
          DECODE(row, g, grp);                                                                     \
          for (size_t t = 0; t < mt; t++) {                                                        \
            const float *xg = xt + t * K + 32 * g;                                                 \
            acc[t][0] = _mm512_fmadd_ps(grp.w[0], _mm512_loadu_ps(xg), acc[t][0]);                 \
            acc[t][1] = _mm512_fmadd_ps(grp.w[1], _mm512_loadu_ps(xg + 16), acc[t][1]);            \
          }                                                                                        \
        }                                                                                          \
        for (size_t t = 0; t < mt; t++)                                                            \
          y[(m0 + t) * ld + n] = _mm512_reduce_add_ps(_mm512_add_ps(acc[t][0], acc[t][1]));        \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  KERNEL_ENTRIES(NAME)                                                                             \
  AMX_ROWS(NAME, ROW_BYTES, DECODE, WP)

// Each kernel's last argument is the bf16 parts its weights take in the
// AMX build (AMX_ROWS): Q4_0's d·(q-8) and Q5_0's d·(q-16) have at most 11
// + 4 significant bits (an f16 scale times a code of at most 4), f16 11,
// bf16 8; every other format's decoded values can fill all 24.
// The block-quantized formats' kernels. The int8-activation build
// (matmul_avx512_vnni.c, which includes this file with ARCHC_INT8 defined)
// defines its own for them and keeps this file's f16 and bf16 kernels.
#ifdef ARCHC_INT8
#define QUANT_KERNEL(NAME, ROW_BYTES, DECODE, WP)
#define QUANT_KERNEL_DOT(NAME, ROW_BYTES, DECODE, WP, DOT)
#else
#define QUANT_KERNEL GROUP_KERNEL
#define QUANT_KERNEL_DOT GROUP_KERNEL_DOT
#endif

// Block scales reach the vector unit through memory. f16_bits returns the
// f32 bits of the f16 at p, equal to vcvtph2ps's for every input, computed
// in general-purpose registers: a normal f16 (exponent 1..30) is rebiased
// by four integer operations; zero, denormals, infinities and NaNs
// (exponent 0 or 31, rare in a scale) take F16C out of line. The bits go to
// a stack slot, which the multiply or add that needs the scale in every
// lane reads as an embedded broadcast ({1to16}: mul_bcast, add_bcast). The
// single-token kernels are bound by the vector ports, and a scale moved
// there by vpbroadcastw + vcvtph2ps, or a register broadcast, takes two or
// three of them per block. Measured on a 2-core Zen 4 (EPYC), one thread,
// Q4_0 at one token, 256 rows of K=2048 (in L2): 19.8 -> 24.4 GMAC/s (the
// same bits broadcast from a register 21.2, by a broadcast load of their
// own 19.3). The asm is what keeps the broadcast in the multiply: compilers
// forward a value just stored to a register broadcast instead. The rebias
// assumes nothing of MXCSR (IREE's workers run with denormals as zero:
// measured), which is why denormal scales go through F16C, as before.
__attribute__((noinline)) static uint32_t f16_bits_rare(uint32_t h) {
  float f = _cvtsh_ss((unsigned short)h);
  uint32_t r;
  __builtin_memcpy(&r, &f, 4);
  return r;
}
static inline uint32_t f16_bits(const uint8_t *p) {
  int16_t hs;
  __builtin_memcpy(&hs, p, 2);
  uint32_t h = (uint32_t)(int32_t)hs; // sign-extended: bit 18 (the sign) lands on bit 31
  if (__builtin_expect(((h & 0x7c00u) - 0x400u) < 0x7800u, 1))
    return ((h << 13) & 0x8fffe000u) + 0x38000000u; // exponent + (127 - 15)
  return f16_bits_rare(h & 0xffffu);
}

// v times (plus) the f32 whose bits are at s, in every lane.
static inline v16f mul_bcast(v16f v, const uint32_t *s) {
  v16f r;
  __asm__("vmulps %1%{1to16%}, %2, %0" : "=v"(r) : "m"(*s), "v"(v));
  return r;
}
static inline v16f add_bcast(v16f v, const uint32_t *s) {
  v16f r;
  __asm__("vaddps %1%{1to16%}, %2, %0" : "=v"(r) : "m"(*s), "v"(v));
  return r;
}

// Q8_0: 34-byte blocks {f16 d; int8 q[32]}, w = d·q.
#define DECODE_Q8_0(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 34 * (g);                                                             \
    uint32_t d = f16_bits(b);                                                                      \
    grp.w[0] = mul_bcast(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 2)))), &d); \
    grp.w[1] = mul_bcast(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 18)))), &d); \
  } while (0)
QUANT_KERNEL(archc_mm_q8_0, K / 32 * 34, DECODE_Q8_0, 3)

// 4-bit codes: 16 bytes at qs, byte j holding element j (low nibble) and
// j+16 (high), looked up in the 16-entry table t (vpermps reads the low 4
// bits of each lane, so the low nibble needs no mask).
static inline void codes4(const uint8_t *qs, v16f t, v16f w[2]) {
  __m512i v = u8x16(qs);
  w[0] = lookup16(v, t);
  w[1] = lookup16(_mm512_srli_epi32(v, 4), t);
}

// Q4_0: 18-byte blocks {f16 d; u8 qs[16]}, w = d·(q - 8).
#define DECODE_Q4_0(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 18 * (g);                                                             \
    uint32_t d = f16_bits(b);                                                                      \
    codes4(b + 2, mul_bcast(iota16(-8), &d), grp.w);                                               \
  } while (0)
QUANT_KERNEL(archc_mm_q4_0, K / 32 * 18, DECODE_Q4_0, 2)

// Q4_1: 20-byte blocks {f16 d, m; u8 qs[16]}, w = d·q + m.
#define DECODE_Q4_1(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 20 * (g);                                                             \
    uint32_t d = f16_bits(b), m = f16_bits(b + 2);                                                 \
    codes4(b + 4, add_bcast(mul_bcast(iota16(0), &d), &m), grp.w);                                 \
  } while (0)
QUANT_KERNEL(archc_mm_q4_1, K / 32 * 20, DECODE_Q4_1, 3)

static inline uint32_t u32le(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

// 5-bit codes: the nibbles of 16 bytes at qs (elements 0..15 low, 16..31
// high), bit j of qh the 5th bit of element j; looked up in the 32-entry
// table t0 (codes 0..15), t1 (16..31) (vpermt2ps: bit 4 of the index picks
// t1).
static inline void codes5(const uint8_t *qs, uint32_t qh, v16f t0, v16f t1, v16f w[2]) {
  __m512i v = u8x16(qs), x10 = _mm512_set1_epi32(16);
  __m512i lo = _mm512_and_si512(v, _mm512_set1_epi32(15)), hi = _mm512_srli_epi32(v, 4);
  lo = _mm512_mask_or_epi32(lo, (__mmask16)qh, lo, x10);
  hi = _mm512_mask_or_epi32(hi, (__mmask16)(qh >> 16), hi, x10);
  w[0] = _mm512_permutex2var_ps(t0, lo, t1);
  w[1] = _mm512_permutex2var_ps(t0, hi, t1);
}

// Q5_0: 22-byte blocks {f16 d; u32 qh; u8 qs[16]}, w = d·((q | h<<4) - 16).
#define DECODE_Q5_0(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 22 * (g);                                                             \
    uint32_t d = f16_bits(b);                                                                      \
    codes5(b + 6, u32le(b + 2), mul_bcast(iota16(-16), &d), mul_bcast(iota16(0), &d), grp.w);     \
  } while (0)
QUANT_KERNEL(archc_mm_q5_0, K / 32 * 22, DECODE_Q5_0, 2)

// Q5_1: 24-byte blocks {f16 d, m; u32 qh; u8 qs[16]}, w = d·(q | h<<4) + m.
#define DECODE_Q5_1(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 24 * (g);                                                             \
    uint32_t d = f16_bits(b), m = f16_bits(b + 2);                                                 \
    codes5(b + 8, u32le(b + 4), add_bcast(mul_bcast(iota16(0), &d), &m), add_bcast(mul_bcast(iota16(16), &d), &m), grp.w); \
  } while (0)
QUANT_KERNEL(archc_mm_q5_1, K / 32 * 24, DECODE_Q5_1, 3)

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
// sub-block i (32 elements) has w = (d·sc_i)·q - dmin·m_i (both products
// exact in f32, as in ggml); qs byte l of 32-byte chunk c holds sub-block
// 2c (low nibble) and 2c+1 (high nibble).
#define DECODE_Q4_K(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 144 * ((g) / 8);                                                      \
    int i = (int)((g) % 8);                                                                        \
    float sc, mn;                                                                                  \
    scale_min_k4(i, b + 4, &sc, &mn);                                                              \
    const uint8_t *q = b + 16 + 32 * (i / 2);                                                      \
    int sh = 4 * (i & 1);                                                                          \
    v16f t = _mm512_fmadd_ps(iota16(0), _mm512_set1_ps(f16(b) * sc), _mm512_set1_ps(-(f16(b + 2) * mn))); \
    grp.w[0] = lookup16(_mm512_srli_epi32(u8x16(q), sh), t);                                       \
    grp.w[1] = lookup16(_mm512_srli_epi32(u8x16(q + 16), sh), t);                                  \
  } while (0)


// Q5_K: 176-byte super-blocks {f16 d, dmin; u8 scales[12]; u8 qh[32];
// u8 qs[128]}: as Q4_K with a 5th bit, bit i of qh[l] for sub-block i.
#define DECODE_Q5_K(row, g, grp)                                                                   \
  do {                                                                                             \
    const uint8_t *b = row + 176 * ((g) / 8);                                                      \
    int i = (int)((g) % 8);                                                                        \
    float sc, mn;                                                                                  \
    scale_min_k4(i, b + 4, &sc, &mn);                                                              \
    const uint8_t *q = b + 48 + 32 * (i / 2);                                                      \
    int sh = 4 * (i & 1);                                                                          \
    __mmask32 hb = _mm256_test_epi8_mask(_mm256_loadu_si256((const __m256i *)(b + 16)),            \
                                         _mm256_set1_epi8((char)(1 << i)));                        \
    __m512i m4 = _mm512_set1_epi32(15), x10 = _mm512_set1_epi32(16);                               \
    __m512i lo = _mm512_and_si512(_mm512_srli_epi32(u8x16(q), sh), m4);                            \
    __m512i hi = _mm512_and_si512(_mm512_srli_epi32(u8x16(q + 16), sh), m4);                       \
    lo = _mm512_mask_or_epi32(lo, (__mmask16)hb, lo, x10);                                         \
    hi = _mm512_mask_or_epi32(hi, (__mmask16)(hb >> 16), hi, x10);                                 \
    v16f d = _mm512_set1_ps(f16(b) * sc), m = _mm512_set1_ps(-(f16(b + 2) * mn));                  \
    v16f t0 = _mm512_fmadd_ps(iota16(0), d, m), t1 = _mm512_fmadd_ps(iota16(16), d, m);            \
    grp.w[0] = _mm512_permutex2var_ps(t0, lo, t1);                                                 \
    grp.w[1] = _mm512_permutex2var_ps(t0, hi, t1);                                                 \
  } while (0)
// ksc16 returns a Q4_K/Q5_K super-block's eight sub-block scales times d
// (lanes 0..7) and eight mins times -dmin (lanes 8..15), from its header b
// {f16 d, dmin; u8 scales[12]}: get_scale_min_k4 for all eight at once on
// 32-bit words (scales 0..3 and mins 0..3 are the low 6 bits of bytes 0..3
// and 4..7; scales 4..7 the low nibbles of bytes 8..11 with bytes 0..3's top
// two bits above, mins 4..7 their high nibbles with bytes 4..7's top bits).
static inline v16f ksc16(const uint8_t *b) {
  const uint8_t *q = b + 4;
  uint32_t w0 = u32le(q), w1 = u32le(q + 4), w2 = u32le(q + 8);
  uint32_t sc0 = w0 & 0x3f3f3f3fu, mn0 = w1 & 0x3f3f3f3fu;
  uint32_t sc1 = (w2 & 0x0f0f0f0fu) | (((w0 >> 6) & 0x03030303u) << 4);
  uint32_t mn1 = ((w2 >> 4) & 0x0f0f0f0fu) | (((w1 >> 6) & 0x03030303u) << 4);
  v16f v = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_setr_epi32((int)sc0, (int)sc1, (int)mn0, (int)mn1)));
  return _mm512_mul_ps(v, _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(f16(b)), _mm512_set1_ps(-f16(b + 2))));
}

// KQ_DOT(HIGH) is the body of a Q4_K (HIGH 0) or Q5_K (HIGH 1) row's dot
// product with x (G groups): per super-block the scales and mins once
// (ksc16), then per 32-byte chunk of codes its two sub-blocks (low and high
// nibbles), each w = (d·sc)·q - dmin·m exactly as DECODE_Q4_K / Q5_K (the
// product d·sc·q is exact, so a multiply and an add round as the FMA does),
// the scales read by embedded broadcasts (mul_bcast) from their stack slots.
#define KQ_DOT(HIGH, SB_BYTES, QS)                                                                 \
  v16f a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                        \
  for (size_t s = 0; s < G / 8; s++) {                                                             \
    const uint8_t *b = row + SB_BYTES * s;                                                         \
    prefetch_span(b + PREFETCH_DIST, SB_BYTES);                                                    \
    uint32_t t[16] __attribute__((aligned(64)));                                                   \
    _mm512_store_si512((__m512i *)t, _mm512_castps_si512(ksc16(b)));                               \
    __m256i qh = HIGH ? _mm256_loadu_si256((const __m256i *)(b + 16)) : _mm256_setzero_si256();    \
    for (int c = 0; c < 4; c++) {                                                                  \
      const uint8_t *q = b + QS + 32 * c;                                                          \
      const float *xg = x + 256 * s + 64 * c;                                                      \
      __m512i lo = u8x16(q), hi = u8x16(q + 16), m4 = _mm512_set1_epi32(15);                       \
      __m512i l0 = _mm512_and_si512(lo, m4), h0 = _mm512_and_si512(hi, m4);                        \
      __m512i l1 = _mm512_srli_epi32(lo, 4), h1 = _mm512_srli_epi32(hi, 4);                        \
      v16f w0, w1, w2, w3;                                                                         \
      if (HIGH) {                                                                                  \
        __m512i x10 = _mm512_set1_epi32(16);                                                       \
        __mmask32 b0 = _mm256_test_epi8_mask(qh, _mm256_set1_epi8((char)(1 << (2 * c))));          \
        __mmask32 b1 = _mm256_test_epi8_mask(qh, _mm256_set1_epi8((char)(1 << (2 * c + 1))));      \
        l0 = _mm512_mask_or_epi32(l0, (__mmask16)b0, l0, x10);                                     \
        h0 = _mm512_mask_or_epi32(h0, (__mmask16)(b0 >> 16), h0, x10);                             \
        l1 = _mm512_mask_or_epi32(l1, (__mmask16)b1, l1, x10);                                     \
        h1 = _mm512_mask_or_epi32(h1, (__mmask16)(b1 >> 16), h1, x10);                             \
        v16f t00 = add_bcast(mul_bcast(iota16(0), t + 2 * c), t + 8 + 2 * c);                     \
        v16f t01 = add_bcast(mul_bcast(iota16(16), t + 2 * c), t + 8 + 2 * c);                    \
        v16f t10 = add_bcast(mul_bcast(iota16(0), t + 2 * c + 1), t + 9 + 2 * c);                 \
        v16f t11 = add_bcast(mul_bcast(iota16(16), t + 2 * c + 1), t + 9 + 2 * c);                \
        w0 = _mm512_permutex2var_ps(t00, l0, t01), w1 = _mm512_permutex2var_ps(t00, h0, t01);      \
        w2 = _mm512_permutex2var_ps(t10, l1, t11), w3 = _mm512_permutex2var_ps(t10, h1, t11);      \
      } else {                                                                                     \
        v16f t0 = add_bcast(mul_bcast(iota16(0), t + 2 * c), t + 8 + 2 * c);                       \
        v16f t1 = add_bcast(mul_bcast(iota16(0), t + 2 * c + 1), t + 9 + 2 * c);                   \
        w0 = lookup16(l0, t0), w1 = lookup16(h0, t0);                                              \
        w2 = lookup16(l1, t1), w3 = lookup16(h1, t1);                                              \
      }                                                                                            \
      a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xg), a0);                                           \
      a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xg + 16), a1);                                      \
      a2 = _mm512_fmadd_ps(w2, _mm512_loadu_ps(xg + 32), a2);                                      \
      a3 = _mm512_fmadd_ps(w3, _mm512_loadu_ps(xg + 48), a3);                                      \
    }                                                                                              \
  }                                                                                                \
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));

static inline float q4_k_dot(const uint8_t *row, const float *x, size_t G) { KQ_DOT(0, 144, 16) }
static inline float q5_k_dot(const uint8_t *row, const float *x, size_t G) { KQ_DOT(1, 176, 48) }

QUANT_KERNEL_DOT(archc_mm_q4_k, K / 256 * 144, DECODE_Q4_K, 3, q4_k_dot)
QUANT_KERNEL_DOT(archc_mm_q5_k, K / 256 * 176, DECODE_Q5_K, 3, q5_k_dot)

// Q6_K: 210-byte super-blocks of 256 {u8 ql[128]; u8 qh[64]; i8 sc[16];
// f16 d}; element groups of 16 with w = (d·sc)·(q - 32), evaluated in that
// order as ggml does. Each 16-lane half of a 32-element group has its own
// scale.
static inline void decode_q6_k(const uint8_t *row, size_t g, group *grp) {
  const uint8_t *b = row + 210 * (g / 8);
  int i = (int)(g % 8);        // 32-element group within the super-block
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
  float d = f16(b + 208);
  const int8_t *sc = (const int8_t *)(b + 192) + 8 * half + k * 2;
  v16f f0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(q)));
  v16f f1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(q, 1)));
  grp->w[0] = _mm512_mul_ps(_mm512_set1_ps(d * (float)sc[0]), f0);
  grp->w[1] = _mm512_mul_ps(_mm512_set1_ps(d * (float)sc[1]), f1);
}
#define DECODE_Q6_K(row, g, grp) decode_q6_k(row, g, &grp)

// q6_k_dot is a Q6_K row's dot product with x (G groups): per super-block
// the sixteen scales d·sc once (one vector, to a stack slot), then per
// 32-element group its codes as decode_q6_k builds them, each 16-element
// half times its scale read by an embedded broadcast (mul_bcast): the same
// products as decode_q6_k's, without its two scalar conversions and
// register broadcasts per group.
static inline float q6_k_dot(const uint8_t *row, const float *x, size_t G) {
  v16f a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t sb = 0; sb < G / 8; sb++) {
    const uint8_t *b = row + 210 * sb;
    prefetch_span(b + PREFETCH_DIST, 210);
    uint32_t t[16] __attribute__((aligned(64)));
    v16f sc = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 192))));
    _mm512_store_si512((__m512i *)t, _mm512_castps_si512(_mm512_mul_ps(_mm512_set1_ps(f16(b + 208)), sc)));
    for (int half = 0; half < 2; half++) {
      __m256i qh = _mm256_loadu_si256((const __m256i *)(b + 128 + 32 * half));
      for (int k = 0; k < 4; k++) {
        __m256i l = _mm256_loadu_si256((const __m256i *)(b + 64 * half + 32 * (k & 1)));
        if (k >= 2) l = _mm256_srli_epi16(l, 4);
        l = _mm256_and_si256(l, _mm256_set1_epi8(0x0f));
        __m256i h = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), _mm256_set1_epi8(3));
        __m256i q = _mm256_sub_epi8(_mm256_or_si256(l, _mm256_slli_epi16(h, 4)), _mm256_set1_epi8(32));
        const float *xg = x + 256 * sb + 128 * half + 32 * k;
        const uint32_t *ts = t + 8 * half + 2 * k;
        v16f w0 = mul_bcast(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(q))), ts);
        v16f w1 = mul_bcast(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(q, 1))), ts + 1);
        if (k & 1) {
          a2 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xg), a2);
          a3 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xg + 16), a3);
        } else {
          a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xg), a0);
          a1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xg + 16), a1);
        }
      }
    }
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
QUANT_KERNEL_DOT(archc_mm_q6_k, K / 256 * 210, DECODE_Q6_K, 3, q6_k_dot)

// F16: rows of K halves, w = f32(h).
#define DECODE_F16(row, g, grp)                                                                    \
  do {                                                                                             \
    const __m256i *p = (const __m256i *)(row + 64 * (g));                                          \
    grp.w[0] = _mm512_cvtph_ps(_mm256_loadu_si256(p));                                             \
    grp.w[1] = _mm512_cvtph_ps(_mm256_loadu_si256(p + 1));                                         \
  } while (0)
GROUP_KERNEL(archc_mm_f16, K * 2, DECODE_F16, 2)

// BF16: rows of K bfloat16, w = f32(bits << 16).
#define DECODE_BF16(row, g, grp)                                                                   \
  do {                                                                                             \
    const __m256i *p = (const __m256i *)(row + 64 * (g));                                          \
    grp.w[0] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(p)), 16)); \
    grp.w[1] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(p + 1)), 16)); \
  } while (0)
GROUP_KERNEL(archc_mm_bf16, K * 2, DECODE_BF16, 1)
