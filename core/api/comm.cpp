// Adapters: communication backends, process groups and collectives (1.10).
#include "../comm/comm_registry.hpp"
#include "../comm/process_group.hpp"
#include "../plugin_registry.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

nnp_process_group& group_arg(nnp_process_group* g, const char* op) { return in_arg(g, op, "group"); }
Tensor& writable_arg(nnp_tensor* t, const char* op, const char* name) { return in_arg(t, op, name); }

// The one shape of every collective entry: started, then either handed
// out as a work or waited for here.
template <typename Start>
nnp_status collective(nnp_work** work, Start&& start) {
  return guard([&] {
    if (work != nullptr) *work = nullptr;
    nnp_work* started = start();
    if (work != nullptr) {
      *work = started;
      return;
    }
    struct Release {
      nnp_work* w;
      ~Release() { comm::release(w); }
    } release{started};
    comm::wait(*started, -1);
  });
}

}  // namespace

nnp_status register_comm(nnp_plugin_host* host, const nnp_comm* comm) {
  return PluginRegistry::register_comm(host, comm);
}
int32_t comm_count() {
  int32_t count = 0;
  guard([&] {
    PluginRegistry::instance().discover();
    count = comm::CommRegistry::instance().count();
  });
  return count;
}
nnp_status comm_info(int32_t i, nnp_comm_info* info) {
  return guard([&] {
    info_arg(info, "comm_info");
    PluginRegistry::instance().discover();
    write_info(info, comm::CommRegistry::instance().at(i).info());
  });
}
nnp_status comm_summary(int32_t i, nnp_comm_info* info) {
  return guard([&] {
    info_arg(info, "comm_summary");
    PluginRegistry::instance().discover();
    write_info(info, comm::CommRegistry::instance().at(i).info(false));
  });
}
nnp_status process_group_new(const nnp_process_group_options* options, nnp_process_group** out) {
  const char* op = "process_group_new";
  return guard([&] {
    nnp_process_group*& result = out_arg(out, op);
    result = comm::new_process_group(in_arg(options, op, "options"));
  });
}
void process_group_release(nnp_process_group* group) { comm::release(group); }
int32_t process_group_rank(const nnp_process_group* group) { return group ? group->rank : -1; }
int32_t process_group_size(const nnp_process_group* group) { return group ? group->size : -1; }

nnp_status comm_all_reduce(nnp_process_group* group, nnp_tensor* tensor, nnp_comm_op op, nnp_work** work) {
  const char* name = "comm_all_reduce";
  return collective(work,
                    [&] { return comm::all_reduce(group_arg(group, name), writable_arg(tensor, name, "tensor"), op); });
}
nnp_status comm_broadcast(nnp_process_group* group, nnp_tensor* tensor, int32_t root, nnp_work** work) {
  const char* name = "comm_broadcast";
  return collective(
      work, [&] { return comm::broadcast(group_arg(group, name), writable_arg(tensor, name, "tensor"), root); });
}
nnp_status comm_all_gather(nnp_process_group* group, const nnp_tensor* input, nnp_tensor* output, nnp_work** work) {
  const char* name = "comm_all_gather";
  return collective(work, [&] {
    return comm::all_gather(group_arg(group, name), tensor_arg(input, name, "input"),
                            writable_arg(output, name, "output"));
  });
}
nnp_status comm_reduce_scatter(nnp_process_group* group, const nnp_tensor* input, nnp_tensor* output, nnp_comm_op op,
                               nnp_work** work) {
  const char* name = "comm_reduce_scatter";
  return collective(work, [&] {
    return comm::reduce_scatter(group_arg(group, name), tensor_arg(input, name, "input"),
                                writable_arg(output, name, "output"), op);
  });
}
nnp_status comm_barrier(nnp_process_group* group, nnp_work** work) {
  return collective(work, [&] { return comm::barrier(group_arg(group, "comm_barrier")); });
}
nnp_status work_wait(nnp_work* work, int64_t timeout_ms) {
  return guard([&] { comm::wait(in_arg(work, "work_wait", "work"), timeout_ms); });
}
nnp_status work_test(nnp_work* work, int32_t* done) {
  return guard([&] {
    int32_t& result = out_arg(done, "work_test", "done");
    result = comm::test(in_arg(work, "work_test", "work")) ? 1 : 0;
  });
}
void work_release(nnp_work* work) { comm::release(work); }

}  // namespace nnp::core::api
