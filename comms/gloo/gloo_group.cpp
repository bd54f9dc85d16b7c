#include "gloo_group.hpp"

#include <gloo/common/error.h>
#include <gloo/transport/tcp/device.h>
#include <unistd.h>

#include <cstdlib>

#include "gloo_store.hpp"

namespace nnp::gloo_comm {
namespace {

// Where Gloo listens: GLOO_SOCKET_IFNAME's interface (PyTorch's variable)
// when set; else the address this rank reaches rank 0's tcp store from (the
// store's local_address, since 1.16), so Gloo is bound where the store is and
// nowhere else; else (a file store) this host's name as it resolves.
std::shared_ptr<::gloo::transport::Device> make_device(const nnp_comm_store* store) {
  ::gloo::transport::tcp::attr attr;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    attr.iface = iface;
  } else if (store->struct_size >= NNP_COMM_STORE_SIZE_1_16 && store->local_address != nullptr) {
    attr.hostname = store->local_address;
  } else {
    char host[256] = {};
    attr.hostname = ::gethostname(host, sizeof host - 1) == 0 && host[0] ? host : "127.0.0.1";
  }
  return ::gloo::transport::tcp::CreateDevice(attr);
}

}  // namespace

Group::Group(const nnp_api* api, int32_t rank, int32_t size, const nnp_comm_store* store, int64_t timeout_ms)
    : api_(api), rank_(rank), size_(size), timeout_ms_(timeout_ms) {
  StoreAdapter adapter(api, store, timeout_ms);
  auto device = make_device(store);
  auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
  context->setTimeout(std::chrono::milliseconds(timeout_ms));
  context->connectFullMesh(adapter, device);
  context_ = context;
  worker_ = std::thread([this] { work_loop(); });
}

Group::~Group() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

std::shared_ptr<WorkState> Group::run(const char* name, std::function<void(const Context&, uint32_t)> body) {
  auto state = std::make_shared<WorkState>();
  // Every collective needs every rank: with two, the peer is named.
  state->waiting_on = "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " waits on " +
                      (size_ == 2 ? "its peer, rank " + std::to_string(1 - rank_)
                                  : "the other " + std::to_string(size_ - 1) + " ranks");
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t tag = next_tag_++;
  queue_.push_back([this, state, name, tag, body = std::move(body)] {
    nnp_status status = NNP_OK;
    std::string message;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!broken_.empty()) {
        status = NNP_COMM_ERROR;
        message =
            std::string("gloo: ") + name + " not run: an earlier collective of this group failed (" + broken_ + ")";
      }
    }
    if (status == NNP_OK) {
      try {
        body(context_, tag);
      } catch (const std::exception& e) {
        // Gloo says "Timed out" when a peer stalls; a peer that died closes
        // its connection ("Connection closed by peer", "Read error").
        const std::string what = e.what();
        status = what.find("Timed out") != std::string::npos || what.find("timed out") != std::string::npos
                     ? NNP_TIMEOUT
                     : NNP_COMM_ERROR;
        message = std::string("gloo: ") + name + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                  " failed: " + what;
        std::lock_guard<std::mutex> guard(mutex_);
        broken_ = message;
      }
    }
    std::lock_guard<std::mutex> done(state->mutex);
    state->status = status;
    state->message = message;
    state->done = true;
    state->finished.notify_all();
  });
  wake_.notify_one();
  return state;
}

void Group::work_loop() {
  for (;;) {
    std::function<void()> next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    next();
  }
}

}  // namespace nnp::gloo_comm
