/* What the C benchmark programs share: a monotonic clock and a seeded random stream. */
#ifndef H5SPARSE_BENCH_SUPPORT_H
#define H5SPARSE_BENCH_SUPPORT_H

#include <stdint.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
 * the next number of the stream `state`. */
static inline uint64_t bench_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#endif
