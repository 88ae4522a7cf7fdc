// Findings of errors that CPU raises from the data (not from shapes or
// dtypes), computed on the device so Strict mode needs no sync at the op:
// each is an s64[kIndexFindingLength] a checking program returns
// (TensorProgram::report_findings), raised at the next host read. Index
// ranges have their own builder (ops/index_bounds.h).
#pragma once

#include <utility>
#include <vector>

#include "hlo/builder.h"

namespace torch_tpu::ops {

// DeviceFinding::kZeroDivision when any element of the integer `divisor`
// is 0, else no finding.
hlo::Value zero_divisor_finding(hlo::Builder& b, hlo::Value divisor);

// DeviceFinding::kTooFewElements when the s64 scalar `needed` exceeds
// `available`, else no finding.
hlo::Value too_few_elements_finding(hlo::Builder& b, hlo::Value needed, int64_t available);

// DeviceFinding::kInvalidDistribution for rows of probabilities `p`
// (float, [rows, n]) that multinomial cannot sample: an element that is
// inf, NaN or negative, else a row that sums to <= 0.
hlo::Value invalid_distribution_finding(hlo::Builder& b, hlo::Value p);

// DeviceFinding::kAssertionFailed when the one-element `condition` is zero
// (a NaN is not zero), else no finding.
hlo::Value assertion_finding(hlo::Builder& b, hlo::Value condition);

// The first (or `last`) element, in row-major order, of the s64 vector
// `values` where the pred vector `flagged` is set: {found (pred), value
// (s64, 0 when none)}.
std::pair<hlo::Value, hlo::Value> flagged_value(hlo::Builder& b, hlo::Value flagged,
                                                hlo::Value values, bool last);

// DeviceFinding::kInvalidMaxIndex for the first element of the s64 vector
// `indices` outside [0, prod(plane)); `plane` is max_unpool's output plane
// (2 or 3 sizes, each below 2^31), named in the message.
hlo::Value invalid_max_index_finding(hlo::Builder& b, hlo::Value indices,
                                     const std::vector<int64_t>& plane);

}  // namespace torch_tpu::ops
