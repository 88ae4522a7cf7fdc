// pjrt::release_when_done: the buffers handed over live until the event
// fires and are dropped (off the caller's thread) afterwards.
#include "pjrt/deferred_release.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "hlo/builder.h"
#include "pjrt/client.h"
#include "plugin_client.h"

namespace torch_tpu {
namespace {

pjrt::BufferPtr upload_f32(const std::vector<float>& data) {
  auto c = plugin_client();
  return c
      ->buffer_from_host(data.data(), PJRT_Buffer_Type_F32, {static_cast<int64_t>(data.size())},
                         c->devices().at(0), pjrt::HostSemantics::kCopyDuringCall)
      .buffer;
}

TEST(DeferredRelease, DonatedBufferIsDroppedOnceItsProgramIsDone) {
  hlo::Builder b;
  auto x = b.parameter({hlo::ElementType::kF32, {4}});
  b.set_results({b.binary("add", x, x)});
  b.alias_result(x, 0);
  auto c = plugin_client();
  auto exe = c->compile(b.module_text(), pjrt::single_device_compile_options());

  auto donated = upload_f32({1, 2, 3, 4});
  auto result = exe->execute({donated->raw()}, c->devices().at(0).raw);
  std::weak_ptr<pjrt::Buffer> watch = donated;
  pjrt::release_when_done(result.done, {std::move(donated)});
  result.done->await();
  pjrt::drain_deferred_releases();
  EXPECT_TRUE(watch.expired());
  std::vector<float> out(4);
  result.outputs.at(0)->to_host_async(out.data(), sizeof(float) * out.size())->await();
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6, 8}));
}

TEST(DeferredRelease, WithoutAnEventBuffersAreDroppedAtOnce) {
  auto buffer = upload_f32({1});
  std::weak_ptr<pjrt::Buffer> watch = buffer;
  pjrt::release_when_done(nullptr, {std::move(buffer)});
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace torch_tpu
