// The loader refuses every broken plugin of the corpus with its path and
// reason, records it, and keeps going: good plugins load, the process lives.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nnp/optimizer_algorithm.hpp>
#include <string>

#include "test_support.hpp"

using namespace nnp;

namespace {

using nnp::test::corpus;

struct Refusal {
  const char* plugin;
  nnp_status status;
  std::string reason;
};

// The corpus's plugins claim ABI (major + 1).minor and major.(minor + 1).
const std::string kMinor = std::to_string(NNP_ABI_MINOR), kNextMinor = std::to_string(NNP_ABI_MINOR + 1);

const Refusal kRefusals[] = {
    {"not_a_library", NNP_IO_ERROR, "not a loadable shared library"},
    {"no_entry", NNP_NOT_FOUND, "exports no nnp_plugin_entry"},
    {"wrong_major", NNP_ABI_MISMATCH,
     "built for ABI 2." + kMinor + " but this nnplug implements ABI 1." + kMinor + " (major versions differ)"},
    {"newer_minor", NNP_ABI_MISMATCH, "built for ABI 1." + kNextMinor + ", newer than this nnplug's ABI 1." + kMinor},
    {"null_entry", NNP_INVALID_ARGUMENT, "nnp_plugin_entry returned NULL"},
    {"init_fails", NNP_DEVICE_ERROR, "init failed with status 6: test plugin: the device refused to start"},
    {"init_throws", NNP_INTERNAL, "init threw an exception (test plugin: init threw on purpose)"},
    {"duplicate_backend", NNP_INVALID_ARGUMENT,
     "backend name 'cpu' is reserved for the backend that ships with nnplug"},
    {"impostor_layer_plugin", NNP_INVALID_ARGUMENT, "the nn. and core. namespaces are reserved"},
    {"null_kernel_slot", NNP_INVALID_ARGUMENT,
     "backend 'null_slot': required kernel slot 'gemm' is NULL; a backend without it says so in "
     "nnp_backend.missing_kernels"},
    {"duplicate_plugin", NNP_INVALID_ARGUMENT, "names starting with 'nnplug.' are reserved"},
    {"halfcompiler", NNP_INVALID_ARGUMENT,
     "backend 'halfcompiler': capability, compile, execute and release go together (set all four or none)"},
    {"comm_too_small", NNP_ABI_MISMATCH, "nnp_comm struct_size 40 is smaller than the first released layout"},
    {"comm_reserved_name", NNP_INVALID_ARGUMENT,
     "communication backend name 'nccl' is reserved for the one that ships with nnplug"},
    {"comm_missing_slot", NNP_INVALID_ARGUMENT,
     "communication backend 'unreachable': required slot 'reduce_scatter' is NULL"},
    {"comm_no_backends", NNP_INVALID_ARGUMENT, "communication backend 'unreachable': backends must list"},
};

const nnp_plugin_info* find_record(const std::string& path, nnp_plugin_info& info) {
  for (int32_t i = 0; i < api().plugin_count(); ++i) {
    info.struct_size = sizeof(info);
    check(api().plugin_info(i, &info));
    if (path == info.path) return &info;
  }
  return nullptr;
}

bool has_backend(const std::string& name) {
  for (const nnp_backend_info& info : nnp::backends())
    if (name == info.name) return true;
  return false;
}

}  // namespace

TEST(PluginLoading, EveryBrokenPluginIsRefusedWithPathAndReason) {
  Device cpu("cpu");  // discovery first: the real backends are loaded
  for (const Refusal& refusal : kRefusals) {
    SCOPED_TRACE(refusal.plugin);
    std::string path = corpus(refusal.plugin);
    nnp_status status = api().load_plugin(path.c_str());
    EXPECT_EQ(status, refusal.status) << api().last_error();
    std::string message = api().last_error();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(refusal.reason), std::string::npos) << message;
    nnp_plugin_info info{};
    ASSERT_NE(find_record(path, info), nullptr);
    EXPECT_EQ(info.loaded, 0);
    EXPECT_EQ(info.status, refusal.status);
    EXPECT_NE(std::string(info.reason).find(refusal.reason), std::string::npos) << info.reason;
  }
  // Nothing a refused plugin registered was kept.
  EXPECT_FALSE(has_backend("init_fails"));
  EXPECT_FALSE(has_backend("null_slot"));
  EXPECT_FALSE(has_backend("other"));
  EXPECT_FALSE(has_backend("halfcompiler"));
  // The good ones still work.
  EXPECT_EQ((ones({2}, Dtype::f32, cpu) + ones({2}, Dtype::f32, cpu)).sum().item<float>(), 4.0f);
  EXPECT_TRUE(has_backend("reference"));
}

TEST(PluginLoading, AGoodPluginLoadsOnceAndReportsNoDevices) {
  std::string path = corpus("good");
  ASSERT_EQ(api().load_plugin(path.c_str()), NNP_OK) << api().last_error();
  EXPECT_EQ(api().load_plugin(path.c_str()), NNP_OK);  // loading twice is a no-op
  EXPECT_TRUE(has_backend("testdummy"));
  nnp::test::expect_error([] { Device("testdummy:0"); }, NNP_NOT_FOUND,
                          {"has no usable device", "test plugin: no such hardware"});
  EXPECT_EQ(api().load_plugin("relative/libx.so"), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("not absolute"), std::string::npos);
  std::string missing = std::string(NNP_CORPUS_DIR) + "/libmissing.so";
  EXPECT_EQ(api().load_plugin(missing.c_str()), NNP_NOT_FOUND);
}

// A backend that reports more devices than any host could keep a record of
// is left without devices, saying why (it was an out-of-host-memory error).
TEST(PluginLoading, ABackendReportingTooManyDevicesHasNoneAndSaysWhy) {
  ASSERT_EQ(api().load_plugin(corpus("many_devices").c_str()), NNP_OK) << api().last_error();
  nnp::test::expect_error(
      [] { Device("testmany:0"); }, NNP_NOT_FOUND,
      {"has no usable device", "reports 2147483647 devices; nnplug keeps at most 4096", "many_devices"});
  bool listed = false;
  for (const nnp_backend_info& info : nnp::backends()) {
    if (std::string(info.name) != "testmany") continue;
    listed = true;
    EXPECT_EQ(info.device_count, 0);
    EXPECT_NE(std::string(info.unavailable_reason).find("reports 2147483647 devices"), std::string::npos);
  }
  EXPECT_TRUE(listed);
}

// A plugin's optimizer algorithm is listed with the built-in kinds, made by
// kind, stepped by its own rule with its state kept by the core, and a
// second registration of its kind is refused.
TEST(PluginLoading, APluginRegistersAnOptimizerAlgorithm) {
  ASSERT_EQ(api().load_plugin(corpus("optimizer_plugin").c_str()), NNP_OK) << api().last_error();
  bool listed = false;
  for (int32_t i = 0; i < api().optimizer_kind_count(); ++i) {
    nnp_optimizer_algorithm info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(api().optimizer_kind_info(i, &info), NNP_OK);
    if (std::string(info.kind) != "test.SignSGD") continue;
    listed = true;
    ASSERT_EQ(info.option_count, 1);
    EXPECT_STREQ(info.option_names[0], "lr");
    EXPECT_EQ(info.option_defaults[0], 0.5);
    EXPECT_STREQ(info.host_state[0], "count");
    EXPECT_EQ(info.host_state[1], nullptr);
  }
  EXPECT_TRUE(listed);
  Tensor p = from_vector(std::vector<double>{1.0, -2.0, 3.0}).requires_grad_();
  optim::Optimizer opt("test.SignSGD", {p});
  for (int step = 0; step < 2; ++step) {
    p.set_grad(from_vector(std::vector<double>{0.3, -4.0, 0.0}));
    opt.step();
  }
  EXPECT_EQ(p.to_vector<double>(), (std::vector<double>{0.0, -1.0, 3.0}));
  double count = 0;
  for (const auto& [name, t] : opt.state_dict())
    if (name == "state.0.count") count = t.item<double>();
  EXPECT_EQ(count, 2.0);
  nnp::test::expect_error([&] { optim::Optimizer("test.SignSGD", {p}, std::move(nn::Attrs().set("lr", -1.0))); },
                          NNP_INVALID_ARGUMENT, {"test.SignSGD: lr must be > 0"});
  nnp::optim::OptimizerAlgorithm again;
  again.kind = "test.SignSGD";
  again.update = [](const nnp::optim::OptionValues&, const Tensor& p, const Tensor&, nnp::optim::OptimizerState&) {
    return p.clone();
  };
  nnp::test::expect_error([&] { nnp::optim::register_optimizer(nullptr, again); }, NNP_INVALID_ARGUMENT,
                          {"'test.SignSGD' is already registered", "optimizer_plugin"});
}

// backend_summary lists a backend as backend_info does, but without its
// devices (-1, no reason); a bad index or a NULL output is refused as
// backend_info refuses it.
TEST(PluginLoading, BackendSummariesNameEveryBackendWithoutCountingDevices) {
  const std::vector<nnp_backend_info> full = nnp::backends(), summaries = nnp::backend_summaries();
  ASSERT_EQ(full.size(), summaries.size());
  for (size_t b = 0; b < full.size(); ++b) {
    EXPECT_STREQ(summaries[b].name, full[b].name);
    EXPECT_STREQ(summaries[b].plugin_path, full[b].plugin_path);
    EXPECT_EQ(summaries[b].score, full[b].score);
    EXPECT_EQ(summaries[b].flags, full[b].flags);
    EXPECT_EQ(summaries[b].device_count, -1);
    EXPECT_STREQ(summaries[b].unavailable_reason, "");
  }
  nnp_backend_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(api().backend_summary(static_cast<int32_t>(full.size()), &info),
            api().backend_info(static_cast<int32_t>(full.size()), &info));
  EXPECT_EQ(api().backend_summary(0, nullptr), NNP_INVALID_ARGUMENT);
}

// A communication backend that loads where it cannot work says why, in
// comm_info and `nnplug devices`, and process_group_new refuses with it;
// comm_summary and `nnplug plugins` list it without asking.
TEST(PluginLoading, ACommunicationBackendThatCannotWorkHereSaysWhy) {
  ASSERT_EQ(api().load_plugin(corpus("comm_unreachable").c_str()), NNP_OK) << api().last_error();
  bool found = false;
  for (int32_t i = 0; i < api().comm_count(); ++i) {
    nnp_comm_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(api().comm_info(i, &info), NNP_OK);
    if (std::string(info.name) != "unreachable") continue;
    found = true;
    ASSERT_NE(info.unavailable_reason, nullptr);
    EXPECT_EQ(std::string(info.unavailable_reason), "test fabric: no adapter is plugged in");
    nnp_comm_info summary{};
    summary.struct_size = sizeof summary;
    ASSERT_EQ(api().comm_summary(i, &summary), NNP_OK);
    EXPECT_EQ(std::string(summary.name), "unreachable");
    EXPECT_EQ(std::string(summary.backends), "cpu,reference");
    EXPECT_EQ(summary.unavailable_reason, nullptr);
  }
  EXPECT_TRUE(found);
  nnp_process_group_options options{};
  options.struct_size = sizeof options;
  options.comm = "unreachable";
  options.world_size = 1;
  options.init_method = "file:///nonexistent/never/used";
  nnp_process_group* group = nullptr;
  EXPECT_EQ(api().process_group_new(&options, &group), NNP_DEVICE_ERROR);
  EXPECT_EQ(group, nullptr);
  EXPECT_NE(std::string(api().last_error())
                .find("communication backend 'unreachable' cannot form groups here: test fabric: no adapter"),
            std::string::npos)
      << api().last_error();
  const std::string env = std::string("NNP_PLUGIN_PATH=") + NNP_CORPUS_DIR + " ";
  const std::string listed = test::run_command(env + NNPLUG_BINARY + " plugins 2>&1").output;
  EXPECT_NE(listed.find("(moves cpu,reference tensors)\n"), std::string::npos) << listed;
  const std::string devices = test::run_command(env + NNPLUG_BINARY + " devices 2>&1").output;
  EXPECT_NE(devices.find("communication backend unreachable (cpu,reference): unavailable here: test fabric: no "
                         "adapter is plugged in"),
            std::string::npos)
      << devices;
}

TEST(PluginLoading, DiscoveryThroughNnpPluginPathListsRefusals) {
  // The real plugins first, so the corpus's impostors of "cpu" are the ones refused.
  std::string command =
      std::string("NNP_PLUGIN_PATH=") + NNP_PLUGIN_DIR + ":" + NNP_CORPUS_DIR + " " + NNPLUG_BINARY + " plugins 2>&1";
  const std::string output = test::run_command(command).output;
  for (const Refusal& refusal : kRefusals) {
    EXPECT_NE(output.find("refused  " + corpus(refusal.plugin)), std::string::npos) << refusal.plugin << "\n" << output;
    EXPECT_NE(output.find(refusal.reason), std::string::npos) << refusal.plugin << "\n" << output;
  }
  EXPECT_NE(output.find("loaded   test.good"), std::string::npos) << output;
  EXPECT_NE(output.find("loaded   test.reentrant"), std::string::npos) << output;
  EXPECT_NE(output.find("loaded   nnplug.cpu"), std::string::npos) << output;
  EXPECT_NE(output.find("loaded   nnplug.reference"), std::string::npos) << output;
  for (const char* backend : {" cpu", " reference", " testdummy", " reentrant"})
    EXPECT_NE(output.find(backend, output.find("backends:")), std::string::npos) << backend << "\n" << output;
}

// A plugin first in the search path that names its backend "cpu" (or its
// layer "nn.*") is refused; the real cpu backend still loads, from the
// folder beside libnnp, and `nnplug plugins` says which file provides it.
TEST(PluginLoading, ImpostorsOfShippedNamesAreRefusedWhateverTheOrder) {
  std::string command = std::string("NNP_PLUGIN_PATH=") + NNP_CORPUS_DIR + " " + NNPLUG_BINARY + " plugins 2>&1";
  const std::string output = test::run_command(command).output;
  EXPECT_NE(output.find("refused  " + corpus("duplicate_backend")), std::string::npos) << output;
  EXPECT_NE(output.find("backend name 'cpu' is reserved"), std::string::npos) << output;
  EXPECT_NE(output.find("refused  " + corpus("impostor_layer_plugin")), std::string::npos) << output;
  EXPECT_NE(output.find("refused  " + corpus("duplicate_plugin")), std::string::npos) << output;
  EXPECT_NE(output.find("loaded   nnplug.cpu"), std::string::npos) << output;
  EXPECT_NE(output.find("  cpu       " + std::string(NNP_PLUGIN_DIR) + "/libnnp_backend_cpu.so"), std::string::npos)
      << output;
  // A backend that lacks kernels (ABI 1.24) is listed with them.
  EXPECT_NE(output.find("  halfway   " + corpus("halfway") +
                        "\n            lacks where, softmax, index_select, gather, scatter_add, random: those ops run "
                        "on cpu, operands copied\n"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("  wholegraph " + corpus("wholegraph") +
                        "\n            compiles graphs: graph mode gives it the nodes it claims\n"),
            std::string::npos)
      << output;
}

// ABI 1.1's additions to what the loader reports.
TEST(PluginLoading, DescriptionsFlagsStreamsAndLayerOrigins) {
  bool saw_cpu = false;
  for (int32_t i = 0; i < api().plugin_count(); ++i) {
    nnp_plugin_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(api().plugin_info(i, &info), NNP_OK);
    if (!info.loaded || std::string(info.name) != "nnplug.cpu") continue;
    saw_cpu = true;
    EXPECT_NE(std::string(info.description).find("OpenBLAS"), std::string::npos) << info.description;
  }
  EXPECT_TRUE(saw_cpu);
  EXPECT_TRUE(Device("cpu").host_memory());
  EXPECT_TRUE(Device("reference").host_memory());
  EXPECT_EQ(Device("cpu").backend(), "cpu");
  EXPECT_EQ(Device("cpu").stream(), nullptr) << "the cpu backend has no streams";
  void* stream = &saw_cpu;
  EXPECT_EQ(api().device_stream(nnp_device{999, 0}, &stream), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(stream, nullptr);

  bool saw_linear = false;
  for (int32_t i = 0; i < api().layer_type_count(); ++i) {
    nnp_layer_type type{};
    type.struct_size = sizeof(type);
    ASSERT_EQ(api().layer_type_info(i, &type), NNP_OK);
    const char* plugin = nullptr;
    ASSERT_EQ(api().layer_type_plugin(i, &plugin), NNP_OK);
    if (std::string(type.name) == "nn.Linear") {
      saw_linear = true;
      EXPECT_STREQ(plugin, "core");
    }
  }
  EXPECT_TRUE(saw_linear);
  const char* plugin = nullptr;
  EXPECT_EQ(api().layer_type_plugin(api().layer_type_count(), &plugin), NNP_INVALID_ARGUMENT);
}

// OpenBLAS picks its kernels as the cpu backend loads it, and Debian 12's
// takes processors newer than it for a Prescott (SSE3 kernels, five to seven
// times slower): before the first plugin loads, nnplug names SkylakeX's
// kernels where OPENBLAS_CORETYPE is unset and the processor has AVX-512 F,
// CD, BW, DQ and VL. The cpu device's description says what OpenBLAS chose,
// which must be what the variable names (nnplug's choice or the user's).
TEST(PluginLoading, OpenBlasRunsTheKernelsNamedBeforeTheCpuBackendLoaded) {
  nnp_device_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(nnp::api().device_info(nnp::Device("cpu").raw(), &info), NNP_OK) << nnp::api().last_error();
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string description = lower(info.description ? info.description : "");
  if (description.find("openblas (its ") == std::string::npos)
    GTEST_SKIP() << "the cpu backend's BLAS is not OpenBLAS: " << description;
  const char* named = std::getenv("OPENBLAS_CORETYPE");
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
  if (avx512) {
    ASSERT_NE(named, nullptr) << "nnplug left OpenBLAS to choose on an AVX-512 processor";
  }
#endif
  if (named == nullptr) GTEST_SKIP() << "no AVX-512 here: OpenBLAS chose for itself (" << description << ")";
  EXPECT_NE(description.find("openblas (its " + lower(named) + " kernels)"), std::string::npos)
      << "OPENBLAS_CORETYPE=" << named << " but " << description;
}
