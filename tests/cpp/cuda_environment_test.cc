// The CUDA plugin's environment (pjrt/cuda_environment.h) over a fake
// site-packages tree: which libraries are found, in which order, where the
// CUDA data directory is, and how XLA_FLAGS is extended. Loading them needs
// a GPU machine (scripts/gpu_check.sh).
#include "pjrt/cuda_environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace torch_tpu::pjrt {
namespace {

class FakePackages {
 public:
  FakePackages() {
    char pattern[] = "/tmp/cuda_env_testXXXXXX";
    root_ = ::mkdtemp(pattern);
  }
  ~FakePackages() { std::system(("rm -rf " + root_).c_str()); }
  const std::string& root() const { return root_; }
  void add(const std::string& relative) {
    std::string path = root_;
    size_t start = 0;
    while (true) {
      size_t slash = relative.find('/', start);
      if (slash == std::string::npos) break;
      path = root_ + "/" + relative.substr(0, slash);
      ::mkdir(path.c_str(), 0700);
      start = slash + 1;
    }
    std::ofstream(root_ + "/" + relative) << "";
  }

 private:
  std::string root_;
};

TEST(CudaEnvironment, RecognizesTheCudaPlugins) {
  EXPECT_TRUE(is_cuda_plugin("/sp/jax_plugins/xla_cuda13/xla_cuda_plugin.so"));
  EXPECT_TRUE(is_cuda_plugin("/sp/jax_plugins/xla_cuda12/xla_cuda_plugin.so"));
  EXPECT_FALSE(is_cuda_plugin("/sp/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"));
  EXPECT_FALSE(is_cuda_plugin("/sp/libtpu/libtpu.so"));
}

TEST(CudaEnvironment, FindsTheWheelsLibrariesDependenciesFirst) {
  FakePackages p;
  // Added out of order, and cuDNN's in its own directory, as its wheel has it.
  p.add("nvidia/cudnn/lib/libcudnn.so.9");
  p.add("nvidia/cu13/lib/libcublas.so.13");
  p.add("nvidia/cu13/lib/libcublasLt.so.13");
  p.add("nvidia/cu13/lib/libcudart.so.13");
  p.add("nvidia/nccl/lib/libnccl.so.2");
  const std::string n = p.root() + "/nvidia/";
  EXPECT_EQ(
      cuda_library_paths({"/nonexistent", p.root()}),
      (std::vector<std::string>{n + "cu13/lib/libcudart.so.13", n + "cu13/lib/libcublasLt.so.13",
                                n + "cu13/lib/libcublas.so.13", n + "nccl/lib/libnccl.so.2",
                                n + "cudnn/lib/libcudnn.so.9"}));
}

TEST(CudaEnvironment, TheFirstRootWithALibraryWins) {
  FakePackages first, second;
  first.add("nvidia/cu13/lib/libcudart.so.13");
  second.add("nvidia/cu13/lib/libcudart.so.13");
  second.add("nvidia/nccl/lib/libnccl.so.2");
  EXPECT_EQ(cuda_library_paths({first.root(), second.root()}),
            (std::vector<std::string>{first.root() + "/nvidia/cu13/lib/libcudart.so.13",
                                      second.root() + "/nvidia/nccl/lib/libnccl.so.2"}));
}

TEST(CudaEnvironment, NoWheelsNoLibrariesNoDataDirectory) {
  FakePackages p;
  p.add("nvidia/cu13/lib/unrelated.txt");
  EXPECT_TRUE(cuda_library_paths({p.root()}).empty());
  EXPECT_EQ(cuda_data_dir({p.root()}), "");
}

TEST(CudaEnvironment, TheDataDirectoryHoldsPtxasOrLibdevice) {
  FakePackages ptxas, libdevice;
  ptxas.add("nvidia/cu13/bin/ptxas");
  libdevice.add("nvidia/cu13/nvvm/libdevice/libdevice.10.bc");
  EXPECT_EQ(cuda_data_dir({ptxas.root()}), ptxas.root() + "/nvidia/cu13");
  EXPECT_EQ(cuda_data_dir({libdevice.root()}), libdevice.root() + "/nvidia/cu13");
}

TEST(CudaEnvironment, XlaFlagsGainTheDataDirectoryUnlessTheUserChoseOne) {
  EXPECT_EQ(with_cuda_data_dir("", "/d"), "--xla_gpu_cuda_data_dir=/d");
  EXPECT_EQ(with_cuda_data_dir("--xla_dump_to=/x", "/d"),
            "--xla_dump_to=/x --xla_gpu_cuda_data_dir=/d");
  EXPECT_EQ(with_cuda_data_dir("--xla_gpu_cuda_data_dir=/mine", "/d"),
            "--xla_gpu_cuda_data_dir=/mine");
  EXPECT_EQ(with_cuda_data_dir("--xla_dump_to=/x", ""), "--xla_dump_to=/x");
}

TEST(CudaEnvironment, PreparingWithoutWheelsLoadsNothingAndSaysSo) {
  FakePackages p;
  const char* before = std::getenv("XLA_FLAGS");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("XLA_FLAGS", "--xla_dump_to=/x", 1);
  const std::string report = prepare_cuda_plugin({p.root()});
  EXPECT_NE(report.find("no CUDA libraries"), std::string::npos) << report;
  EXPECT_STREQ(std::getenv("XLA_FLAGS"), "--xla_dump_to=/x");
  if (before != nullptr) {
    ::setenv("XLA_FLAGS", saved.c_str(), 1);
  } else {
    ::unsetenv("XLA_FLAGS");
  }
}

}  // namespace
}  // namespace torch_tpu::pjrt
