/*
 * host_backend.h - the parts every backend whose device memory is ordinary
 * host memory shares (nnplug's cpu and reference backends, a vendor's CPU
 * backend): one device, copies that are memcpy, nothing to wait for.
 *
 *   static nnp_backend backend;
 *   nnp_host_backend_init(&backend, "acme_cpu", 150, &acme_kernels);
 *   backend.device_info = acme_device_info;
 *   backend.alloc = acme_alloc;
 *   backend.free = acme_free;
 *   return api->register_backend(host, &backend);
 *
 * Header-only C99.
 */
#ifndef NNP_HOST_BACKEND_H
#define NNP_HOST_BACKEND_H

#include <string.h>

#include "plugin.h"

static inline int32_t nnp_host_device_count(void* state) {
  (void)state;
  return 1;
}

static inline nnp_status nnp_host_copy(void* state, int32_t device, void* dst, const void* src, size_t bytes) {
  (void)state;
  (void)device;
  if (bytes) memcpy(dst, src, bytes);
  return NNP_OK;
}

/* Host kernels finish before they return: nothing is ever in flight. */
static inline nnp_status nnp_host_synchronize(void* state, int32_t device) {
  (void)state;
  (void)device;
  return NNP_OK;
}

/* Clears *backend and fills what a host-memory backend has in common: the
 * size, name, score, NNP_BACKEND_HOST_MEMORY, one device, the three copies,
 * synchronize and the kernel table. The caller sets device_info, alloc and
 * free (and any optional slot) by name. */
static inline void nnp_host_backend_init(nnp_backend* backend, const char* name, int32_t score,
                                         const nnp_kernels* kernels) {
  memset(backend, 0, sizeof *backend);
  backend->struct_size = sizeof *backend;
  backend->name = name;
  backend->score = score;
  backend->flags = NNP_BACKEND_HOST_MEMORY;
  backend->device_count = nnp_host_device_count;
  backend->copy_from_host = nnp_host_copy;
  backend->copy_to_host = nnp_host_copy;
  backend->copy_on_device = nnp_host_copy;
  backend->synchronize = nnp_host_synchronize;
  backend->kernels = kernels;
}

#endif /* NNP_HOST_BACKEND_H */
