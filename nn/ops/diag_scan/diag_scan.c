/* The diagonal linear recurrence h_t = a_t * h_{t-1} + b_t over (B, T, D) arrays, one pass over memory.

   Compiled on first use by cpu_kernel.py (plain C99, no headers beyond the standard ones; built with
   -O3 -ffp-contract=off and without -ffast-math: every step rounds a_t * h_{t-1} and then the sum, as the
   sequential reference does; real results equal it bit for bit, complex ones to rounding, since torch's own
   complex product rounds differently in the lanes its vector loop leaves to a scalar tail).

   diag_scan_<type>(bsz, len, d, a, a_sb, a_st, b, b_sb, b_st, h0, h_sb, out, o_sb, o_st, reverse, conj_a):
     for every sequence i < bsz and lane j < d, from h = h0[i, j],
       forward (reverse = 0): t = 0 .. len-1;   reverse (reverse = 1): t = len-1 .. 0,
       h = a[i, t, j] * h + b[i, t, j];   out[i, t, j] = h.
   Element (i, t, j) of a lies at a + i*a_sb + t*a_st + j (strides in elements of the type; the lanes are
   contiguous); likewise b, out, and h0 (i, j) at h0 + i*h_sb + j. conj_a (complex types only): use conj(a).
   out must not overlap a, b or h0 except element for element.

   Loop order, for bandwidth: per sequence, per block of BLOCK lanes held in a local array, sequential over t;
   the inner loop over the block's lanes has no dependence between lanes and vectorizes. a and b are read once
   and out written once. Each step's lanes are taken one cache line (LINE bytes) at a time, the lines in the
   direction of the scan (descending in reverse): memory is then walked in one direction, which the hardware
   prefetchers follow (ascending lanes within descending rows ran the reverse scan 2.5x slower here). Complex
   numbers are interleaved (re, im) pairs, multiplied as (ar*hr - ai*hi, ar*hi + ai*hr), the order of torch's
   vectorized complex product. */

#include <stdint.h>

#define BLOCK 256
#define LINE 64

#define REAL_SCAN(NAME, T)                                                                                          \
    void NAME(int64_t bsz, int64_t len, int64_t d, const T *a, int64_t a_sb, int64_t a_st, const T *b,            \
              int64_t b_sb, int64_t b_st, const T *h0, int64_t h_sb, T *out, int64_t o_sb, int64_t o_st,          \
              int reverse, int conj_a) {                                                                            \
        T h[BLOCK];                                                                                                 \
        const int64_t W = LINE / sizeof(T); /* lanes per cache line */                                              \
        (void)conj_a;                                                                                               \
        for (int64_t i = 0; i < bsz; ++i) {                                                                         \
            for (int64_t d0 = 0; d0 < d; d0 += BLOCK) {                                                             \
                const int64_t n = d - d0 < BLOCK ? d - d0 : BLOCK, nl = (n + W - 1) / W;                            \
                for (int64_t j = 0; j < n; ++j) h[j] = h0[i * h_sb + d0 + j];                                       \
                for (int64_t s = 0; s < len; ++s) {                                                                 \
                    const int64_t t = reverse ? len - 1 - s : s;                                                    \
                    const T *at = a + i * a_sb + t * a_st + d0;                                                     \
                    const T *bt = b + i * b_sb + t * b_st + d0;                                                     \
                    T *ot = out + i * o_sb + t * o_st + d0;                                                         \
                    for (int64_t k = 0; k < nl; ++k) {                                                              \
                        const int64_t j0 = (reverse ? nl - 1 - k : k) * W, j1 = j0 + W < n ? j0 + W : n;            \
                        for (int64_t j = j0; j < j1; ++j) {                                                         \
                            const T v = at[j] * h[j];                                                               \
                            h[j] = v + bt[j];                                                                       \
                            ot[j] = h[j];                                                                           \
                        }                                                                                           \
                    }                                                                                               \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
    }

/* Complex: pointers to the interleaved scalars; strides and d count complex elements. */
#define COMPLEX_SCAN(NAME, T)                                                                                       \
    void NAME(int64_t bsz, int64_t len, int64_t d, const T *a, int64_t a_sb, int64_t a_st, const T *b,            \
              int64_t b_sb, int64_t b_st, const T *h0, int64_t h_sb, T *out, int64_t o_sb, int64_t o_st,          \
              int reverse, int conj_a) {                                                                            \
        T hr[BLOCK], hi[BLOCK];                                                                                     \
        const int64_t W = LINE / (2 * sizeof(T)); /* complex lanes per cache line */                                \
        const T sign = conj_a ? (T)-1 : (T)1; /* multiplying by +-1 is exact: sign*ai is conj's imaginary part */ \
        for (int64_t i = 0; i < bsz; ++i) {                                                                         \
            for (int64_t d0 = 0; d0 < d; d0 += BLOCK) {                                                             \
                const int64_t n = d - d0 < BLOCK ? d - d0 : BLOCK, nl = (n + W - 1) / W;                            \
                const T *hp = h0 + 2 * (i * h_sb + d0);                                                             \
                for (int64_t j = 0; j < n; ++j) {                                                                   \
                    hr[j] = hp[2 * j];                                                                              \
                    hi[j] = hp[2 * j + 1];                                                                          \
                }                                                                                                   \
                for (int64_t s = 0; s < len; ++s) {                                                                 \
                    const int64_t t = reverse ? len - 1 - s : s;                                                    \
                    const T *at = a + 2 * (i * a_sb + t * a_st + d0);                                               \
                    const T *bt = b + 2 * (i * b_sb + t * b_st + d0);                                               \
                    T *ot = out + 2 * (i * o_sb + t * o_st + d0);                                                   \
                    for (int64_t k = 0; k < nl; ++k) {                                                              \
                        const int64_t j0 = (reverse ? nl - 1 - k : k) * W, j1 = j0 + W < n ? j0 + W : n;            \
                        for (int64_t j = j0; j < j1; ++j) {                                                         \
                            const T ar = at[2 * j], ai = sign * at[2 * j + 1];                                      \
                            const T pr = ar * hr[j], qr = ai * hi[j], pi = ar * hi[j], qi = ai * hr[j];             \
                            const T re = pr - qr, im = pi + qi;                                                     \
                            hr[j] = re + bt[2 * j];                                                                 \
                            hi[j] = im + bt[2 * j + 1];                                                             \
                            ot[2 * j] = hr[j];                                                                      \
                            ot[2 * j + 1] = hi[j];                                                                  \
                        }                                                                                           \
                    }                                                                                               \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
    }

REAL_SCAN(diag_scan_f32, float)
REAL_SCAN(diag_scan_f64, double)
COMPLEX_SCAN(diag_scan_c64, float)
COMPLEX_SCAN(diag_scan_c128, double)
