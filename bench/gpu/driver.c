/*===- driver.c - runs one compiled attention variant on the GPU ---------===//
 *
 * Part of the attn-mlir project.
 *
 * Linked by scripts/gpu-artifacts.sh with the host code of every variant
 * (compiled by --attn-gpu-pipeline) and libattn_cuda_runtime.so, whose mgpu*
 * functions it also uses for device memory. Usage:
 *
 *   attn-gpu-bench VARIANT B LQ LK DIR [ITERS]
 *
 * reads DIR/{q,k,v,mask,bias}.bin (raw, row-major, the variant's types),
 * fills the output with NaN, runs the variant once, writes DIR/out.bin; with
 * ITERS > 0 it then times ITERS further calls (after 3 warm-up calls) and
 * writes one time per line, in milliseconds, to DIR/times_ms.txt. Each call
 * is synchronous (the generated host code launches on a fresh stream and
 * waits), so a time includes the launch and stream overheads. Any error the
 * runtime reports (attnCudaRuntimeTakeErrors) ends the run with status 4:
 * a launch that failed leaves the output poisoned and its time meaningless.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  void *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} MemRef4;

void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, int isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void *mgpuStreamCreate(void);
void mgpuStreamSynchronize(void *stream);
size_t attnCudaRuntimeTakeErrors(char *buffer, size_t size);

typedef void (*VariantFn)(MemRef4 **args);
typedef struct {
  const char *name;
  VariantFn fn;
  int d, dv, heads, hkv, hasMask, hasBias, elemBytes;
} Variant;

#include "variants.inc" /* generated: kVariants[], kNumVariants */

static MemRef4 makeMemRef(void *ptr, int64_t s0, int64_t s1, int64_t s2,
                          int64_t s3) {
  MemRef4 m;
  m.allocated = m.aligned = ptr;
  m.offset = 0;
  m.sizes[0] = s0, m.sizes[1] = s1, m.sizes[2] = s2, m.sizes[3] = s3;
  m.strides[3] = 1;
  m.strides[2] = s3;
  m.strides[1] = s2 * s3;
  m.strides[0] = s1 * s2 * s3;
  return m;
}

/* The runtime prints CUDA errors on stderr and keeps them for this check. */
static void checkRuntime(const char *doing) {
  char errors[4096];
  if (attnCudaRuntimeTakeErrors(errors, sizeof errors)) {
    fprintf(stderr, "error: %s failed: %s\n", doing, errors);
    exit(4);
  }
}

static void *deviceAlloc(size_t bytes) {
  void *p = mgpuMemAlloc(bytes, NULL, 0);
  checkRuntime("allocating device memory");
  if (!p) {
    fprintf(stderr, "error: no device memory (%zu bytes)\n", bytes);
    exit(3);
  }
  return p;
}

/* Copies DIR/NAME.bin (exactly `bytes` long) to new device memory. */
static void *upload(const char *dir, const char *name, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: cannot open %s\n", path);
    exit(2);
  }
  void *host = malloc(bytes);
  if (fread(host, 1, bytes, f) != bytes) {
    fprintf(stderr, "error: %s is not %zu bytes\n", path, bytes);
    exit(2);
  }
  fclose(f);
  void *dev = deviceAlloc(bytes);
  mgpuMemcpy(dev, host, bytes, NULL);
  checkRuntime("copying to the device");
  free(host);
  return dev;
}

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr,
            "usage: %s VARIANT B LQ LK DIR [ITERS]\nvariants:", argv[0]);
    for (int i = 0; i < kNumVariants; ++i)
      fprintf(stderr, " %s", kVariants[i].name);
    fprintf(stderr, "\n");
    return 2;
  }
  const Variant *v = NULL;
  for (int i = 0; i < kNumVariants; ++i)
    if (!strcmp(kVariants[i].name, argv[1]))
      v = &kVariants[i];
  if (!v) {
    fprintf(stderr, "error: unknown variant %s\n", argv[1]);
    return 2;
  }
  /* The kernels' modules are loaded by global constructors, before main. */
  checkRuntime("loading the kernels");
  int64_t b = atoll(argv[2]), lq = atoll(argv[3]), lk = atoll(argv[4]);
  const char *dir = argv[5];
  int iters = argc > 6 ? atoi(argv[6]) : 0;
  size_t e = (size_t)v->elemBytes;
  int64_t h = v->heads, hkv = v->hkv;

  void *q = upload(dir, "q", (size_t)(b * h * lq * v->d) * e);
  void *k = upload(dir, "k", (size_t)(b * hkv * lk * v->d) * e);
  void *val = upload(dir, "v", (size_t)(b * hkv * lk * v->dv) * e);
  size_t outElems = (size_t)(b * h * lq * v->dv);
  void *out = deviceAlloc(outElems * e);
  /* 0xFFFF is a NaN in f16 and bf16, 0xFFFFFFFF in f32. */
  mgpuMemset16(out, 0xFFFF, outElems * e / 2, NULL);
  checkRuntime("poisoning the output");

  MemRef4 mq = makeMemRef(q, b, h, lq, v->d);
  MemRef4 mk = makeMemRef(k, b, hkv, lk, v->d);
  MemRef4 mv = makeMemRef(val, b, hkv, lk, v->dv);
  MemRef4 mo = makeMemRef(out, b, h, lq, v->dv);
  MemRef4 mm, mb;
  MemRef4 *args[6];
  int n = 0;
  args[n++] = &mq, args[n++] = &mk, args[n++] = &mv;
  if (v->hasMask) { /* bool key-padding mask [B, 1, 1, Lk], one byte each */
    mm = makeMemRef(upload(dir, "mask", (size_t)(b * lk)), b, 1, 1, lk);
    args[n++] = &mm;
  }
  if (v->hasBias) { /* f32 bias [1, H, Lq, Lk] */
    mb = makeMemRef(upload(dir, "bias", (size_t)(h * lq * lk) * 4), 1, h, lq,
                    lk);
    args[n++] = &mb;
  }
  args[n++] = &mo;

  v->fn(args);
  checkRuntime(v->name);
  void *host = malloc(outElems * e);
  mgpuMemcpy(host, out, outElems * e, NULL);
  checkRuntime("copying the output back");
  char path[4096];
  snprintf(path, sizeof path, "%s/out.bin", dir);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(host, 1, outElems * e, f) != outElems * e) {
    fprintf(stderr, "error: cannot write %s\n", path);
    return 2;
  }
  fclose(f);

  if (iters > 0) {
    for (int i = 0; i < 3; ++i)
      v->fn(args);
    checkRuntime(v->name);
    snprintf(path, sizeof path, "%s/times_ms.txt", dir);
    f = fopen(path, "w");
    for (int i = 0; i < iters; ++i) {
      double t0 = nowMs();
      v->fn(args);
      double t1 = nowMs();
      checkRuntime(v->name);
      fprintf(f, "%.6f\n", t1 - t0);
    }
    fclose(f);
  }
  free(host);
  for (int i = 0; i < n; ++i)
    mgpuMemFree(args[i]->allocated, NULL);
  checkRuntime("freeing device memory");
  printf("ok %s B=%lld Lq=%lld Lk=%lld\n", v->name, (long long)b, (long long)lq,
         (long long)lk);
  return 0;
}
