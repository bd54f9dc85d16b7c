// Communication backends for the loader's test corpus, one per file, chosen
// by NNP_TEST_COMM: a loadable one that cannot form groups here (it says
// why), and one of each way an nnp_comm table is refused.
#include <nnp/plugin.h>

#define UNREACHABLE 1
#define TOO_SMALL 2
#define RESERVED_NAME 3
#define MISSING_SLOT 4
#define NO_BACKENDS 5

namespace {

nnp_status no_group(void*, int32_t, int32_t, nnp_device, const nnp_comm_store*, int64_t, nnp_comm_group**) {
  return NNP_UNIMPLEMENTED;
}
void no_release(void*, nnp_comm_group*) {}
nnp_status no_reduce(nnp_comm_group*, const nnp_view*, nnp_comm_op, nnp_comm_work**) { return NNP_UNIMPLEMENTED; }
nnp_status no_broadcast(nnp_comm_group*, const nnp_view*, int32_t, nnp_comm_work**) { return NNP_UNIMPLEMENTED; }
nnp_status no_gather(nnp_comm_group*, const nnp_view*, const nnp_view*, nnp_comm_work**) { return NNP_UNIMPLEMENTED; }
nnp_status no_scatter(nnp_comm_group*, const nnp_view*, const nnp_view*, nnp_comm_op, nnp_comm_work**) {
  return NNP_UNIMPLEMENTED;
}
nnp_status no_barrier(nnp_comm_group*, nnp_comm_work**) { return NNP_UNIMPLEMENTED; }
nnp_status no_wait(nnp_comm_work*, int64_t) { return NNP_UNIMPLEMENTED; }
nnp_status no_test(nnp_comm_work*, int32_t*) { return NNP_UNIMPLEMENTED; }
void no_work_release(nnp_comm_work*) {}
const char* why_not(void*) { return "test fabric: no adapter is plugged in"; }

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  nnp_comm comm{};
  comm.struct_size = sizeof comm;
  comm.name = "unreachable";
  comm.backends = "cpu,reference";
  comm.group_new = no_group;
  comm.group_release = no_release;
  comm.all_reduce = no_reduce;
  comm.broadcast = no_broadcast;
  comm.all_gather = no_gather;
  comm.reduce_scatter = no_scatter;
  comm.barrier = no_barrier;
  comm.wait = no_wait;
  comm.test = no_test;
  comm.work_release = no_work_release;
  comm.unavailable_reason = why_not;
#if NNP_TEST_COMM == TOO_SMALL
  comm.struct_size = 40;
#elif NNP_TEST_COMM == RESERVED_NAME
  comm.name = "nccl";
#elif NNP_TEST_COMM == MISSING_SLOT
  comm.reduce_scatter = nullptr;
#elif NNP_TEST_COMM == NO_BACKENDS
  comm.backends = "";
#endif
  return api->register_comm(host, &comm);
}

}  // namespace

NNP_PLUGIN_ENTRY {
  static const nnp_plugin_descriptor descriptor = {
      sizeof(nnp_plugin_descriptor),
      NNP_ABI_MAJOR,
      NNP_ABI_MINOR,
      NNP_TEST_PLUGIN_NAME,
      "0.0.1",
      init,
      "a communication backend of the loader's test corpus",
  };
  return &descriptor;
}
