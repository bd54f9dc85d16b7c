#include "nccl_runtime.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace nnp::nccl_comm {
namespace {

// The soname, then the toolkit's folder this plugin was built against.
void* open_library(const char* soname, std::string& reason) {
  if (void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return handle;
  const std::string first = ::dlerror();
  const std::string beside = std::string(NNP_CUDA_LIBRARY_DIR) + "/" + soname;
  if (void* handle = ::dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  reason = std::string("cannot open ") + soname + ": " + first;
  return nullptr;
}

template <typename F>
bool bind(void* library, const char* name, F*& slot, std::string& reason) {
  slot = reinterpret_cast<F*>(::dlsym(library, name));
  if (slot == nullptr && reason.empty()) reason = std::string("the library lacks ") + name;
  return slot != nullptr;
}

struct Loaded {
  Runtime table{};
  std::string reason;  // empty when usable
};

Loaded load() {
  Loaded l;
  void* cudart = open_library("libcudart.so." NNP_CUDART_MAJOR, l.reason);
  if (cudart == nullptr) return l;
  void* nccl = open_library("libnccl.so.2", l.reason);
  if (nccl == nullptr) return l;
  Runtime& r = l.table;
#define NNP_BIND(library, name) bind(library, #name, r.name, l.reason)
  const bool bound =
      NNP_BIND(cudart, cudaGetDeviceCount) & NNP_BIND(cudart, cudaSetDevice) & NNP_BIND(cudart, cudaGetErrorString) &
      NNP_BIND(cudart, cudaStreamCreateWithFlags) & NNP_BIND(cudart, cudaStreamDestroy) &
      NNP_BIND(cudart, cudaStreamWaitEvent) & NNP_BIND(cudart, cudaEventCreateWithFlags) &
      NNP_BIND(cudart, cudaEventRecord) & NNP_BIND(cudart, cudaEventQuery) & NNP_BIND(cudart, cudaEventDestroy) &
      NNP_BIND(cudart, cudaMalloc) & NNP_BIND(cudart, cudaFree) & NNP_BIND(nccl, ncclGetUniqueId) &
      NNP_BIND(nccl, ncclCommInitRank) & NNP_BIND(nccl, ncclCommDestroy) & NNP_BIND(nccl, ncclCommAbort) &
      NNP_BIND(nccl, ncclCommGetAsyncError) & NNP_BIND(nccl, ncclGetErrorString) & NNP_BIND(nccl, ncclAllReduce) &
      NNP_BIND(nccl, ncclBroadcast) & NNP_BIND(nccl, ncclAllGather) & NNP_BIND(nccl, ncclReduceScatter);
#undef NNP_BIND
  if (!bound) return l;
  int count = 0;
  const cudaError_t status = r.cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    l.reason = std::string("no CUDA device: ") + r.cudaGetErrorString(status);
  else if (count == 0)
    l.reason = "no CUDA device: the runtime finds none";
  return l;
}

}  // namespace

const Runtime* runtime(const char** reason) {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // kept until exit, as the libraries are
  std::call_once(once, [] { loaded = new Loaded(load()); });
  if (reason) *reason = loaded->reason.c_str();
  return loaded->reason.empty() ? &loaded->table : nullptr;
}

}  // namespace nnp::nccl_comm
