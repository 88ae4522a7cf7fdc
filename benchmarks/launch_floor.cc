// The cost of one PJRT launch with nothing of PyTorch or torch_tpu's
// executor around it: what a Strict op can not go below on this plugin.
//
// Built with the extension (CMake target tpu_launch_floor, into the build
// directory); benchmarks/eager_overhead.py runs it and prints its figures
// beside the per-op ones. By hand:
//
//   TORCH_TPU_PJRT_PLUGIN=/path/to/plugin.so build/<dir>/tpu_launch_floor [iters]
//
// For each program it compiles one StableHLO module over 64x64 float32
// inputs, then launches it `iters` times in a row on the same inputs,
// dropping each launch's output buffer and completion event at once (as a
// Strict loop whose results die does), awaits the last one, and prints the
// fastest of five repeats in microseconds per launch, of wall time and of
// the launching thread's CPU time: "name wall_us thread_cpu_us".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "pjrt/client.h"

namespace {

using torch_tpu::hlo::Builder;
using torch_tpu::hlo::ElementType;
using torch_tpu::hlo::TensorType;
namespace pjrt = torch_tpu::pjrt;

struct Program {
  const char* name;
  int inputs;
  void (*build)(Builder& b, const std::vector<torch_tpu::hlo::Value>& in);
};

const TensorType kMatrix{ElementType::kF32, {64, 64}};

const Program kPrograms[] = {
    {"add", 2,
     [](Builder& b, const std::vector<torch_tpu::hlo::Value>& in) {
       b.set_results({b.binary("add", in[0], in[1])});
     }},
    {"exp", 1,
     [](Builder& b, const std::vector<torch_tpu::hlo::Value>& in) {
       b.set_results({b.unary("exponential", in[0])});
     }},
    {"sum", 1,
     [](Builder& b, const std::vector<torch_tpu::hlo::Value>& in) {
       b.set_results({b.reduce(in[0], b.constant(ElementType::kF32, 0.0), {0, 1}, "add")});
     }},
};

// CPU time of the calling thread, in microseconds.
double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

struct PerLaunch {
  double wall_us = 1e30;
  double thread_cpu_us = 1e30;  // of the launching thread
};

PerLaunch per_launch(const pjrt::Client& client, const pjrt::LoadedExecutable& exe,
                     const std::vector<PJRT_Buffer*>& args, int iters) {
  PJRT_Device* device = client.devices().at(0).raw;
  PerLaunch best;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_us();
    pjrt::EventPtr last;
    for (int i = 0; i < iters; ++i) last = exe.execute(args, device).done;
    last->await();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best.wall_us = std::min(best.wall_us, took.count() / iters);
    best.thread_cpu_us = std::min(best.thread_cpu_us, (thread_cpu_us() - cpu_start) / iters);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = std::getenv("TORCH_TPU_PJRT_PLUGIN");
  if (path == nullptr) {
    std::fprintf(stderr, "set TORCH_TPU_PJRT_PLUGIN to the plugin's path\n");
    return 2;
  }
  const int iters = argc > 1 ? std::atoi(argv[1]) : 20000;
  try {
    // The options torch_tpu gives a CPU plugin (core/runtime.cc): one device.
    std::map<std::string, int64_t> options;
    if (std::string(path).find("cpu") != std::string::npos) options["cpu_device_count"] = 1;
    auto client = pjrt::Client::create(pjrt::Api::load(path), options);
    std::vector<float> host(64 * 64, 0.5f);
    std::vector<pjrt::BufferPtr> inputs;
    for (int i = 0; i < 2; ++i) {
      inputs.push_back(client
                           ->buffer_from_host(host.data(), PJRT_Buffer_Type_F32, {64, 64},
                                              client->devices().at(0),
                                              pjrt::HostSemantics::kCopyDuringCall)
                           .buffer);
    }
    for (const Program& p : kPrograms) {
      Builder b;
      std::vector<torch_tpu::hlo::Value> params;
      for (int i = 0; i < p.inputs; ++i) params.push_back(b.parameter(kMatrix));
      p.build(b, params);
      auto exe = client->compile(b.module_text(), pjrt::single_device_compile_options());
      std::vector<PJRT_Buffer*> args;
      for (int i = 0; i < p.inputs; ++i) args.push_back(inputs[i]->raw());
      per_launch(*client, *exe, args, iters / 10);  // warm-up
      const PerLaunch cost = per_launch(*client, *exe, args, iters);
      std::printf("%s %.3f %.3f\n", p.name, cost.wall_us, cost.thread_cpu_us);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpu_launch_floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
