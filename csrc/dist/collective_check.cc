#include "dist/collective_check.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "dist/python_state_set_aside.h"

namespace torch_tpu::dist {
namespace {

// Operation names are hashed into the row so that two different collectives
// issued at the same step are told apart.
int64_t name_code(const char* op) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char* p = op; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return static_cast<int64_t>(h >> 1);
}

std::vector<int64_t> row_of(const CollectiveCall& call) {
  return {name_code(call.op), static_cast<int64_t>(call.dtype), call.tensors, call.numel, call.root,
          call.reduce_op};
}

std::string describe(const CollectiveCall& call) {
  std::ostringstream out;
  out << call.tensors << " tensor(s) of " << c10::toString(call.dtype) << ", " << call.numel
      << " elements";
  if (call.root >= 0) out << ", root " << call.root;
  return out.str();
}

bool check_enabled() {
  const char* value = std::getenv("TORCH_TPU_DIST_CHECK");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

}  // namespace

CollectiveCheck::CollectiveCheck(c10d::Backend& engine, int rank, int size)
    : engine_(engine), rank_(rank), size_(size), enabled_(check_enabled()) {}

std::vector<std::vector<int64_t>> CollectiveCheck::gather_rows(const std::vector<int64_t>& row) {
  auto n = static_cast<int64_t>(row.size());
  at::Tensor mine = at::tensor(row, at::kLong);
  at::Tensor all = at::empty({size_ * n}, at::kLong);
  {
    PythonStateSetAside no_python_state;  // Gloo's thread may drop the work last
    engine_._allgather_base(all, mine)->wait();
  }
  std::vector<std::vector<int64_t>> rows(size_);
  const int64_t* data = all.const_data_ptr<int64_t>();
  for (int r = 0; r < size_; ++r) rows[r].assign(data + r * n, data + (r + 1) * n);
  return rows;
}

void CollectiveCheck::check(const CollectiveCall& call) {
  if (!enabled_ || size_ <= 1) return;
  auto mine = row_of(call);
  auto rows = gather_rows(mine);
  for (int r = 0; r < size_; ++r) {
    const auto& other = rows[r];
    if (other == rows[0]) continue;
    // Describe rank 0's call and the first rank that differs, the same on
    // every rank.
    std::ostringstream message;
    message << "tpu_dist " << call.op << ": the ranks' calls do not match (rank " << rank_
            << " passed " << describe(call) << "); ";
    if (other[0] != rows[0][0]) {
      message << "rank " << r << " is in a different collective than rank 0";
    } else {
      message << "rank 0 passed " << c10::toString(static_cast<at::ScalarType>(rows[0][1])) << " x "
              << rows[0][3] << " elements in " << rows[0][2] << " tensor(s)"
              << (rows[0][4] >= 0 ? ", root " + std::to_string(rows[0][4]) : std::string())
              << (rows[0][5] != other[5] ? ", a different reduce op" : std::string()) << "; rank "
              << r << " passed " << c10::toString(static_cast<at::ScalarType>(other[1])) << " x "
              << other[3] << " elements in " << other[2] << " tensor(s)"
              << (other[4] >= 0 ? ", root " + std::to_string(other[4]) : std::string());
    }
    TORCH_CHECK(false, message.str());
  }
}

void CollectiveCheck::check_splits(const CollectiveCall& call,
                                   const std::vector<int64_t>& input_splits,
                                   const std::vector<int64_t>& output_splits) {
  if (!enabled_ || size_ <= 1) return;
  // First the call itself (same op, dtype and row size everywhere), so that
  // the rows of the second gather have the same length on every rank.
  check(call);
  // What this rank sends to each rank, then what it expects from each.
  std::vector<int64_t> mine(input_splits);
  mine.insert(mine.end(), output_splits.begin(), output_splits.end());
  auto rows = gather_rows(mine);
  for (int i = 0; i < size_; ++i) {
    for (int j = 0; j < size_; ++j) {
      int64_t sends = rows[i][j];
      int64_t expects = rows[j][size_ + i];
      TORCH_CHECK(sends == expects, "tpu_dist ", call.op, ": rank ", i, " sends ", sends,
                  " rows to rank ", j, ", which expects ", expects, " rows from it");
    }
  }
}

}  // namespace torch_tpu::dist
