// Ownership of PJRT objects on error paths, against a fake plugin (a PJRT_Api
// table made here) whose calls fail on demand and which counts live objects:
// a constructor that throws after a PJRT object was created destroys it, and
// a failing destroy is reported, never thrown or silently dropped.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pjrt/client.h"
#include "pjrt/error_report.h"
#include "pjrt/owned.h"

namespace torch_tpu {
namespace {

// --- the fake plugin ---------------------------------------------------------

struct FakeError {
  std::string message;
};
// Each fake object is a heap allocation, so LeakSanitizer (scripts/test.sh
// --asan) also sees any object that is never destroyed.
struct FakeObject {
  int kind;
};

struct FakeState {
  std::atomic<int> live{0};
  bool fail_platform_name = false;
  bool fail_get_executable = false;
  bool fail_num_outputs = false;
  bool fail_buffer_destroy = false;
};
FakeState fake;

PJRT_Error* fail(const char* what) {
  return reinterpret_cast<PJRT_Error*>(new FakeError{std::string("fake ") + what + " failed"});
}
template <typename T>
T* make_object() {
  fake.live++;
  return reinterpret_cast<T*>(new FakeObject{0});
}
template <typename T>
void free_object(T* object) {
  fake.live--;
  delete reinterpret_cast<FakeObject*>(object);
}

void ErrorDestroy(PJRT_Error_Destroy_Args* a) { delete reinterpret_cast<FakeError*>(a->error); }
void ErrorMessage(PJRT_Error_Message_Args* a) {
  const auto* e = reinterpret_cast<const FakeError*>(a->error);
  a->message = e->message.data();
  a->message_size = e->message.size();
}
PJRT_Error* ErrorGetCode(PJRT_Error_GetCode_Args* a) {
  a->code = PJRT_Error_Code_INTERNAL;
  return nullptr;
}

PJRT_Error* ClientCreate(PJRT_Client_Create_Args* a) {
  a->client = make_object<PJRT_Client>();
  return nullptr;
}
PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* a) {
  free_object(a->client);
  return nullptr;
}
PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* a) {
  if (fake.fail_platform_name) return fail("PlatformName");
  a->platform_name = "fake";
  a->platform_name_size = 4;
  return nullptr;
}
PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* a) {
  a->platform_version = "0";
  a->platform_version_size = 1;
  return nullptr;
}
PJRT_Error* ClientAddressableDevices(PJRT_Client_AddressableDevices_Args* a) {
  a->addressable_devices = nullptr;
  a->num_addressable_devices = 0;
  return nullptr;
}
PJRT_Error* ClientCompile(PJRT_Client_Compile_Args* a) {
  a->executable = make_object<PJRT_LoadedExecutable>();
  return nullptr;
}
PJRT_Error* LoadedExecutableDestroy(PJRT_LoadedExecutable_Destroy_Args* a) {
  free_object(a->executable);
  return nullptr;
}
PJRT_Error* LoadedExecutableGetExecutable(PJRT_LoadedExecutable_GetExecutable_Args* a) {
  if (fake.fail_get_executable) return fail("GetExecutable");
  a->executable = make_object<PJRT_Executable>();
  return nullptr;
}
PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* a) {
  free_object(a->executable);
  return nullptr;
}
PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* a) {
  if (fake.fail_num_outputs) return fail("NumOutputs");
  a->num_outputs = 1;
  return nullptr;
}
PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args* a) {
  free_object(a->buffer);
  return fake.fail_buffer_destroy ? fail("BufferDestroy") : nullptr;
}
PJRT_Error* EventDestroy(PJRT_Event_Destroy_Args* a) {
  free_object(a->event);
  return nullptr;
}
PJRT_Error* EventOnReady(PJRT_Event_OnReady_Args* a) {
  a->callback(nullptr, a->user_arg);  // already ready: runs inline
  return nullptr;
}

std::shared_ptr<const pjrt::Api> fake_api() {
  static PJRT_Api table = [] {
    PJRT_Api t;
    std::memset(&t, 0, sizeof(t));
    t.struct_size = sizeof(PJRT_Api);
    t.pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
    t.pjrt_api_version.major_version = PJRT_API_MAJOR;
    t.pjrt_api_version.minor_version = PJRT_API_MINOR;
    t.PJRT_Error_Destroy = &ErrorDestroy;
    t.PJRT_Error_Message = &ErrorMessage;
    t.PJRT_Error_GetCode = &ErrorGetCode;
    t.PJRT_Client_Create = &ClientCreate;
    t.PJRT_Client_Destroy = &ClientDestroy;
    t.PJRT_Client_PlatformName = &ClientPlatformName;
    t.PJRT_Client_PlatformVersion = &ClientPlatformVersion;
    t.PJRT_Client_AddressableDevices = &ClientAddressableDevices;
    t.PJRT_Client_Compile = &ClientCompile;
    t.PJRT_LoadedExecutable_Destroy = &LoadedExecutableDestroy;
    t.PJRT_LoadedExecutable_GetExecutable = &LoadedExecutableGetExecutable;
    t.PJRT_Executable_Destroy = &ExecutableDestroy;
    t.PJRT_Executable_NumOutputs = &ExecutableNumOutputs;
    t.PJRT_Buffer_Destroy = &BufferDestroy;
    t.PJRT_Event_Destroy = &EventDestroy;
    t.PJRT_Event_OnReady = &EventOnReady;
    return t;
  }();
  static std::shared_ptr<const pjrt::Api> api = pjrt::Api::from_table(&table, "fake");
  return api;
}

// Collects what is reported through pjrt::report_error while alive.
struct CapturedReports {
  static std::vector<std::string>& messages() {
    static std::vector<std::string> m;
    return m;
  }
  static void capture(const std::string& message) { messages().push_back(message); }
  CapturedReports() {
    messages().clear();
    pjrt::set_error_reporter(&capture);
  }
  ~CapturedReports() { pjrt::set_error_reporter(nullptr); }
};

class Ownership : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.fail_platform_name = fake.fail_get_executable = fake.fail_num_outputs = false;
    fake.fail_buffer_destroy = false;
    ASSERT_EQ(fake.live.load(), 0);
  }
  void TearDown() override { EXPECT_EQ(fake.live.load(), 0) << "a fake PJRT object leaked"; }
};

// --- the tests ---------------------------------------------------------------

TEST_F(Ownership, ClientAndExecutableAreDestroyedNormally) {
  auto client = pjrt::Client::create(fake_api(), {});
  EXPECT_EQ(client->platform_name(), "fake");
  auto exe = client->compile("module {}", pjrt::single_device_compile_options());
  EXPECT_EQ(exe->num_outputs(), 1u);
  EXPECT_EQ(fake.live.load(), 3);  // client, loaded executable, its executable
  exe.reset();
  client.reset();
}

TEST_F(Ownership, ClientWhoseConstructorThrowsIsDestroyed) {
  fake.fail_platform_name = true;
  EXPECT_THROW(pjrt::Client::create(fake_api(), {}), pjrt::Error);
}

TEST_F(Ownership, ExecutableWhoseConstructorThrowsIsDestroyed) {
  auto client = pjrt::Client::create(fake_api(), {});
  fake.fail_get_executable = true;
  EXPECT_THROW(client->compile("module {}", pjrt::single_device_compile_options()), pjrt::Error);
  EXPECT_EQ(fake.live.load(), 1);  // only the client
  fake.fail_get_executable = false;
  // Fails after the unloaded executable was obtained: both are destroyed.
  fake.fail_num_outputs = true;
  EXPECT_THROW(client->compile("module {}", pjrt::single_device_compile_options()), pjrt::Error);
  EXPECT_EQ(fake.live.load(), 1);
}

TEST_F(Ownership, DestroyErrorIsReportedNotThrown) {
  CapturedReports reports;
  fake.fail_buffer_destroy = true;
  {
    auto buffer = std::make_shared<pjrt::Buffer>(
        pjrt::Owned<PJRT_Buffer>(fake_api(), make_object<PJRT_Buffer>()));
  }
  ASSERT_EQ(CapturedReports::messages().size(), 1u);
  EXPECT_NE(CapturedReports::messages()[0].find("PJRT_Buffer_Destroy"), std::string::npos);
  EXPECT_NE(CapturedReports::messages()[0].find("fake BufferDestroy failed"), std::string::npos);
}

TEST_F(Ownership, DefaultReporterWritesToStderr) {
  fake.fail_buffer_destroy = true;
  ::testing::internal::CaptureStderr();
  {
    pjrt::Owned<PJRT_Buffer> buffer(fake_api(), make_object<PJRT_Buffer>());
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("fake BufferDestroy failed"), std::string::npos) << err;
}

TEST_F(Ownership, ThrowingOnReadyCallbackIsReported) {
  CapturedReports reports;
  pjrt::Event event(pjrt::Owned<PJRT_Event>(fake_api(), make_object<PJRT_Event>()));
  event.on_ready([](const std::string&) { throw std::runtime_error("callback boom"); });
  ASSERT_EQ(CapturedReports::messages().size(), 1u);
  EXPECT_NE(CapturedReports::messages()[0].find("callback boom"), std::string::npos);
}

TEST_F(Ownership, MovedOwnedDestroysOnce) {
  pjrt::Owned<PJRT_Buffer> a(fake_api(), make_object<PJRT_Buffer>());
  pjrt::Owned<PJRT_Buffer> b(std::move(a));
  EXPECT_FALSE(a);
  EXPECT_TRUE(b);
  a = std::move(b);
  EXPECT_EQ(fake.live.load(), 1);
  a.reset();
  EXPECT_EQ(fake.live.load(), 0);
}

}  // namespace
}  // namespace torch_tpu
