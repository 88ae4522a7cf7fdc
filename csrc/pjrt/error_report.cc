#include "pjrt/error_report.h"

#include <atomic>
#include <cstdio>

namespace torch_tpu::pjrt {
namespace {

void to_stderr(const std::string& message) {
  std::fprintf(stderr, "[torch_tpu] %s\n", message.c_str());
}

std::atomic<ErrorReporter> reporter{&to_stderr};

}  // namespace

void set_error_reporter(ErrorReporter r) { reporter.store(r != nullptr ? r : &to_stderr); }

void report_error(const std::string& message) noexcept {
  try {
    reporter.load()(message);
  } catch (...) {
    // A reporter that throws (a Python warning filter set to "error", say)
    // must not take the process down from a destructor.
    to_stderr(message);
  }
}

}  // namespace torch_tpu::pjrt
