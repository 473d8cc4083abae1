// membw: the streaming read bandwidth of this machine with T threads, for
// scripts/bench.sh (decode at large sizes reads every weight once per
// token, so its ceiling is this figure). Each thread sums its own slice of
// one buffer (1 GiB by default: far past the caches), five times; the best
// pass is printed as GB/s (1e9 bytes per second).
//
//   cc -O2 -march=native -pthread membw.c -o membw && ./membw THREADS [MiB]
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const uint64_t *p;
  size_t n;
  uint64_t sum;
} slice;

static void *reader(void *arg) {
  slice *s = arg;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= s->n; i += 4) {
    a += s->p[i];
    b += s->p[i + 1];
    c += s->p[i + 2];
    d += s->p[i + 3];
  }
  s->sum = a + b + c + d;
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
  if (threads < 1 || threads > 256 || mib < 64) {
    fprintf(stderr, "usage: membw THREADS [MiB >= 64]\n");
    return 2;
  }
  size_t bytes = mib << 20, words = bytes / 8;
  uint64_t *buf = aligned_alloc(64, bytes);
  if (!buf) {
    fprintf(stderr, "membw: cannot allocate %zu MiB\n", mib);
    return 1;
  }
  memset(buf, 1, bytes);
  pthread_t tid[256];
  slice sl[256];
  double best = 0;
  uint64_t total = 0;
  for (int pass = 0; pass < 5; pass++) {
    double t0 = now();
    for (int t = 0; t < threads; t++) {
      sl[t].p = buf + words / threads * t;
      sl[t].n = words / threads;
      pthread_create(&tid[t], NULL, reader, &sl[t]);
    }
    for (int t = 0; t < threads; t++) {
      pthread_join(tid[t], NULL);
      total += sl[t].sum;
    }
    double gbs = (double)(words / threads * threads * 8) / (now() - t0) / 1e9;
    if (gbs > best) best = gbs;
  }
  printf("%.2f\n", best);
  fprintf(stderr, "membw: %d threads, %zu MiB, best of 5: %.2f GB/s (checksum %llu)\n", threads, mib, best, (unsigned long long)(total & 0xff));
  free(buf);
  return 0;
}
