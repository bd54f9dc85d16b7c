// The profiler: events for ops, modules, autograd nodes and scopes, nested
// per thread; the Chrome trace is valid Trace Event JSON whose complete
// events nest on each thread; the summary table's total is the trace's; a
// session's refusals.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>
#include <thread>

#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_error;
using json = nlohmann::json;

profiler::Profile profile_training_step() {
  nn::Sequential net({nn::Linear(3, 5), nn::ReLU(), nn::Linear(5, 2)});
  const Tensor x = randn({4, 3});
  profiler::Profiler recording;
  {
    profiler::RecordFunction step("ProfilerStep#1");
    net(x).pow(2.0).sum().backward();
  }
  return recording.stop();
}

TEST(Profiler, RecordsOpsModulesBackwardAndScopesNested) {
  const std::vector<profiler::Event> events = profile_training_step().events();
  std::map<std::string, int> count;
  for (const auto& e : events) count[e.name] += 1;
  EXPECT_EQ(count["ProfilerStep#1"], 1);
  EXPECT_EQ(count["nn.Module: Sequential"], 1);
  EXPECT_EQ(count["nn.Module: Linear"], 2);
  EXPECT_GE(count["matmul"], 2 + 3) << "two forward and at least three backward matmuls";
  bool backward_node = false;
  for (const auto& [name, n] : count) backward_node |= name.rfind("autograd::engine::evaluate_function: ", 0) == 0;
  EXPECT_TRUE(backward_node);
  for (size_t i = 0; i < events.size(); ++i) {
    const profiler::Event& e = events[i];
    ASSERT_GE(e.duration_ns, 0) << e.name;
    if (e.parent < 0) continue;
    const profiler::Event& p = events[static_cast<size_t>(e.parent)];
    EXPECT_EQ(p.thread, e.thread);
    EXPECT_LE(p.start_ns, e.start_ns) << e.name << " in " << p.name;
    EXPECT_GE(p.start_ns + p.duration_ns, e.start_ns + e.duration_ns) << e.name << " in " << p.name;
  }
  // The first matmul is the first Linear's forward: its inputs and device.
  for (const auto& e : events)
    if (e.name == "matmul") {
      EXPECT_EQ(e.kind, profiler::EventKind::Op);
      EXPECT_EQ(e.shapes, "[[4,3],[3,5]]");
      EXPECT_EQ(e.dtypes, "f32, f32");
      EXPECT_EQ(e.device, "cpu:0");
      EXPECT_GE(e.device_us, 0.0) << "the cpu backend's timing events";
      EXPECT_EQ(events[static_cast<size_t>(e.parent)].name, "nn.Module: Linear");
      EXPECT_GE(e.bytes_allocated, 4 * 5 * 4);
      break;
    }
}

TEST(Profiler, ChromeTraceNestsCompleteEventsPerThreadAndTheTableAddsUp) {
  const profiler::Profile profile = profile_training_step();
  const std::string path = testing::TempDir() + "nnp_trace.json";
  profile.export_chrome_trace(path);
  std::ifstream in(path);
  const json trace = json::parse(in);
  std::remove(path.c_str());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::map<int64_t, std::vector<std::pair<double, double>>> by_thread;
  std::map<std::string, int> categories;
  for (const json& e : trace["traceEvents"]) {
    ASSERT_EQ(e["ph"], "X");
    ASSERT_TRUE(e["name"].is_string() && e["ts"].is_number() && e["dur"].is_number() && e["pid"].is_number());
    categories[e["cat"]] += 1;
    by_thread[e["tid"].get<int64_t>()].emplace_back(e["ts"].get<double>(), e["dur"].get<double>());
  }
  for (const char* cat : {"op", "module", "backward", "user_annotation"}) EXPECT_GT(categories[cat], 0) << cat;
  // On each thread, sorted by start, an event lies inside every open one or
  // after it: the properly nested intervals Perfetto draws as a stack.
  double top_level = 0;
  for (auto& [tid, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(),
              [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<double> open_ends;
    for (const auto& [ts, dur] : spans) {
      while (!open_ends.empty() && ts >= open_ends.back() - 1e-3) open_ends.pop_back();
      if (!open_ends.empty()) EXPECT_LE(ts + dur, open_ends.back() + 1e-3) << "an event crosses its parent's end";
      if (open_ends.empty()) top_level += dur;
      open_ends.push_back(ts + dur);
    }
  }
  const std::string table = profile.table();
  EXPECT_NE(table.find("Self CPU %"), std::string::npos) << table;
  EXPECT_NE(table.find("# of Calls"), std::string::npos);
  const size_t at = table.find("Self CPU time total: ");
  ASSERT_NE(at, std::string::npos) << table;
  double total = std::stod(table.substr(at + 21));
  const std::string unit = table.substr(table.find_first_not_of("0123456789.", at + 21), 2);
  total *= unit == "ms" ? 1000.0 : unit == "us" ? 1.0 : 1e6;
  EXPECT_NEAR(total, top_level, 0.002 * top_level + 0.01) << table;
  // Sorted by the key asked for.
  const std::string by_count = profile.table("count", 3);
  EXPECT_NE(by_count.find("# of Calls"), std::string::npos);
  expect_error([&] { profile.table("speed"); }, NNP_INVALID_ARGUMENT, {"cannot sort by 'speed'"});
}

TEST(Profiler, MemoryIsChargedToTheOpThatAllocates) {
  const Tensor a = ones({1000}), b = ones({1000});
  profiler::Profiler recording;
  Tensor c = a + b;
  c = Tensor();
  const std::vector<profiler::Event> events = recording.stop().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, "add");
  EXPECT_EQ(events[0].bytes_allocated, 4000);
  EXPECT_EQ(events[0].shapes, "[[1000],[1000]]");
}

TEST(Profiler, EachThreadHasItsOwnTrack) {
  profiler::Profiler recording;
  std::thread other([] { (ones({8}) * 2.0).sum(); });
  (ones({8}) * 3.0).sum();
  other.join();
  std::set<int32_t> threads;
  for (const auto& e : recording.stop().events()) threads.insert(e.thread);
  EXPECT_EQ(threads.size(), 2u);
}

TEST(Profiler, SessionRefusalsAndNothingRecordedWhenOff) {
  EXPECT_FALSE(profiler::Profiler::is_active());
  {
    profiler::RecordFunction scope("ignored");  // no session: nothing happens
    (ones({2}) + 1.0).sum();
  }
  profiler::Profiler recording;
  EXPECT_TRUE(profiler::Profiler::is_active());
  expect_error([] { profiler::Profiler second; }, NNP_INVALID_ARGUMENT, {"already running"});
  const profiler::Profile empty = recording.stop();
  EXPECT_EQ(empty.size(), 0);
  nnp_profile* raw = nullptr;
  EXPECT_EQ(api().profiler_stop(&raw), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(raw, nullptr);
  nnp_profiler_options small{};
  small.struct_size = 4;
  EXPECT_EQ(api().profiler_start(&small), NNP_INVALID_ARGUMENT);
  nnp_profile_event e{};
  e.struct_size = sizeof(e);
  EXPECT_EQ(api().profile_event(empty.get(), 0, &e), NNP_INVALID_ARGUMENT);
}

}  // namespace
