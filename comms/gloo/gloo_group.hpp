// A group of the gloo communication backend: Gloo's full-mesh TCP context,
// and one worker thread that runs the group's collectives in the order they
// were started (every rank starts them in the same order), so each
// collective is asynchronous to its caller. After a failure (a peer died, a
// timeout) the context is unusable: later collectives fail at once with the
// first failure.
#pragma once

#include <gloo/rendezvous/context.h>
#include <nnp/plugin.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace nnp::gloo_comm {

using Context = std::shared_ptr<::gloo::Context>;

// What a work handle and the worker share: the handle may be released
// before a timed-out collective finally ends.
struct WorkState {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  nnp_status status = NNP_OK;
  std::string message;
  std::string waiting_on;  // who a wait that times out names: "rank 1 of 2 waits on rank 0"
};

class Group {
 public:
  Group(const nnp_api* api, int32_t rank, int32_t size, const nnp_comm_store* store, int64_t timeout_ms);
  ~Group();  // waits for the queued collectives

  // Queues body (which may throw) as the next collective; its work state.
  std::shared_ptr<WorkState> run(const char* name, std::function<void(const Context& context, uint32_t tag)> body);
  int32_t rank() const { return rank_; }
  int32_t size() const { return size_; }
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeout_ms_); }

 private:
  void work_loop();
  const nnp_api* api_;
  int32_t rank_, size_;
  int64_t timeout_ms_;
  Context context_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::string broken_;  // the first failure, once there is one
  uint32_t next_tag_ = 0;
  std::thread worker_;
};

}  // namespace nnp::gloo_comm
