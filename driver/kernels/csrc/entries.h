// The exported entry points of every kernel variant (matmul_avx2.c,
// matmul_avx512.c, matmul_avx512_vnni.c), around a format's NAME_rows:
//   NAME(x, xo, w, wo, y, yo, M, N, K, wg): workgroup wg computes columns
//   [wg·ROWS, min(N, (wg+1)·ROWS)) of y = x·Wᵀ;
//   NAME3(x, xo, w1, w1o, w2, w2o, w3, w3o, y, yo, M, N1, N2, N3, K, wg): up
//   to three weights reading the same x, outputs side by side in y.
//   NAMEe(x, xo, w, wo, off, oo, used, uo, y, yo, N, K, rb, E, wg, j): routed
//   experts (lower's experts primitive). W is E stacked [N, K] weights (E·N
//   stored rows of rb bytes), x and y hold the tokens' rows grouped by
//   expert: rows [off[e], off[e+1]) of x [·, K] go through expert e into the
//   same rows of y [·, N]. used lists the experts with rows, ascending, then
//   E for the slots left; workgroup (wg, j) computes columns [wg·ROWS,
//   min(N, (wg+1)·ROWS)) of expert used[j]'s rows (nothing for E).
// NAME_rows(x, w, y, ld, M, n0, n1, K) computes columns [n0, n1) of y (row
// stride ld) for every token.
// The AMX build (matmul_avx512.c with ARCHC_AMX) adds NAMEx and NAMEx3,
// NAME and NAME3 with x replaced by its split s [Mp, 3, K] (archc_split3)
// around NAME_amx. Included by the variant's source (driver/kernels
// writes it beside the source it builds).
#define ENTRY_PAIR(NAME, NAME3, ROWSFN, XT, ROWS)                                                        \
  void NAME(const XT *xb, size_t xo, const uint8_t *wb, size_t wo, float *yb, size_t yo,           \
            size_t M, size_t N, size_t K, size_t wg) {                                             \
    size_t n0 = wg * ROWS, n1 = n0 + ROWS < N ? n0 + ROWS : N;                                     \
    ROWSFN(xb + xo, wb + wo, yb + yo, N, M, n0, n1, K);                                            \
  }                                                                                                \
  void NAME3(const XT *xb, size_t xo, const uint8_t *w1, size_t w1o, const uint8_t *w2,            \
               size_t w2o, const uint8_t *w3, size_t w3o, float *yb, size_t yo, size_t M,          \
               size_t N1, size_t N2, size_t N3, size_t K, size_t wg) {                             \
    size_t g1 = (N1 + ROWS - 1) / ROWS, g2 = (N2 + ROWS - 1) / ROWS, ld = N1 + N2 + N3;            \
    const uint8_t *w = w1 + w1o;                                                                   \
    size_t N = N1, col = 0;                                                                        \
    if (wg >= g1 + g2) {                                                                           \
      w = w3 + w3o, N = N3, col = N1 + N2, wg -= g1 + g2;                                          \
    } else if (wg >= g1) {                                                                         \
      w = w2 + w2o, N = N2, col = N1, wg -= g1;                                                    \
    }                                                                                              \
    size_t n0 = wg * ROWS, n1 = n0 + ROWS < N ? n0 + ROWS : N;                                     \
    ROWSFN(xb + xo, w, yb + yo + col, ld, M, n0, n1, K);                                           \
  }
#define KERNEL_ENTRIES(NAME)                                                                       \
  ENTRY_PAIR(NAME, NAME##3, NAME##_rows, float, ROWS)                                                    \
  void NAME##e(const float *xb, size_t xo, const uint8_t *wb, size_t wo, const int32_t *ob,        \
               size_t oo, const int32_t *ub, size_t uo, float *yb, size_t yo, size_t N, size_t K,  \
               size_t rb, size_t E, size_t wg, size_t j) {                                         \
    size_t e = (size_t)ub[uo + j];                                                                 \
    if (e >= E)                                                                                    \
      return;                                                                                      \
    size_t m0 = (size_t)ob[oo + e], m1 = (size_t)ob[oo + e + 1];                                   \
    size_t n0 = wg * ROWS, n1 = n0 + ROWS < N ? n0 + ROWS : N;                                     \
    NAME##_rows(xb + xo + m0 * K, wb + wo + e * N * rb, yb + yo + m0 * N, N, m1 - m0, n0, n1, K);  \
  }
#define KERNEL_ENTRIES_AMX(NAME) ENTRY_PAIR(NAME##x, NAME##x3, NAME##_amx, uint16_t, AMX_ROWS_WG)
