#include "ops/kernel.h"

#include <algorithm>

#include "core/checked_size.h"
#include "runtime/low_precision.h"

namespace pointrt {

const std::vector<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64};
const std::vector<DType> kFloat32Only = {DType::kFloat32};
const std::vector<DType> kIntTypes = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                      DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
const std::vector<DType> kSignedNumericTypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,
                                                DType::kInt16,   DType::kInt32,   DType::kInt64};
const std::vector<DType> kNumericTypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,  DType::kInt16,
                                          DType::kInt32,   DType::kInt64,   DType::kUInt8, DType::kUInt16,
                                          DType::kUInt32,  DType::kUInt64};
const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat64, DType::kInt8,  DType::kInt16,
                                      DType::kInt32,   DType::kInt64,   DType::kUInt8, DType::kUInt16,
                                      DType::kUInt32,  DType::kUInt64,  DType::kBool};
const std::vector<DType> kBoolOnly = {DType::kBool};

const Tensor& KernelContext::input(size_t i) const {
  if (!has_input(i)) fail(where(), ": required input ", i, " is missing");
  if (!inputs_[i]->defined() && i < other_inputs_.size() && other_inputs_[i])
    fail(where(), ": ", input_name(i), " is ", other_inputs_[i]->describe(), ", but this operator takes a tensor");
  return *inputs_[i];
}

AnyValue KernelContext::any_input(size_t i) const {
  if (i < other_inputs_.size() && other_inputs_[i]) return *other_inputs_[i];
  if (!has_input(i)) return AnyValue();
  return *inputs_[i];
}

const Sequence& KernelContext::sequence_input(size_t i) const {
  if (i < other_inputs_.size() && other_inputs_[i] && other_inputs_[i]->is_sequence())
    return other_inputs_[i]->sequence();
  const AnyValue v = any_input(i);
  fail(where(), ": ", input_name(i), " must be a sequence, got ", v.defined() ? v.describe() : "nothing");
}

void KernelContext::set_any_output(size_t i, AnyValue v) {
  if (v.is_tensor()) return set_output(i, v.tensor());
  std::vector<AnyValue>& outs = *other_outs();
  if (outs.size() < outputs_.size()) outs.resize(outputs_.size());
  outs.at(i) = std::move(v);
}

std::string KernelContext::input_name(size_t i) const {
  if (i >= node_.inputs.size() || node_.inputs[i] < 0) return str_cat("input ", i, " (absent)");
  if (graph_) return str_cat("input ", i, " '", graph_->values[node_.inputs[i]].name, "'");
  return str_cat("input ", i);
}

std::string KernelContext::output_name(size_t i) const {
  if (graph_ && i < node_.outputs.size() && node_.outputs[i] >= 0)
    return str_cat("output ", i, " '", graph_->values[node_.outputs[i]].name, "'");
  return str_cat("output ", i);
}

Tensor& KernelContext::output(size_t i, DType dtype, const Shape& shape) {
  if (i >= outputs_.size()) fail(where(), ": kernel wrote output ", i, " but the node has ", outputs_.size());
  // The message is built only when the check fails: this runs for every output of every node.
  if (!tensor_size_within(dtype, shape, run_->allocator().max_tensor_bytes()))
    check_tensor_size(dtype, shape, run_->allocator().max_tensor_bytes(), str_cat(where(), ": ", output_name(i)));
  outputs_[i] = run_->allocator().allocate(dtype, shape);
  return outputs_[i];
}

Tensor KernelContext::temporary(size_t bytes) {
  if (bytes > run_->allocator().max_tensor_bytes())
    fail(where(), ": a temporary buffer of ", format_bytes(bytes), " is above the limit of ",
         format_bytes(run_->allocator().max_tensor_bytes()), " (max_tensor_bytes; --max-tensor-bytes in the CLI)");
  return run_->allocator().allocate(DType::kUInt8, {static_cast<int64_t>(bytes)});
}

void KernelContext::set_output(size_t i, Tensor t) {
  if (i >= outputs_.size()) fail(where(), ": kernel set output ", i, " but the node has ", outputs_.size());
  outputs_[i] = std::move(t);
}

void OpTable::add(OpEntry e) {
  auto key = std::make_pair(e.domain, e.op_type);
  for (size_t idx : index_[key]) {
    const OpEntry& o = entries_[idx];
    if (!(e.until < o.since || e.since > o.until))
      fail("operator table: ", e.domain, "::", e.op_type, " opsets ", e.since, "-", e.until, " overlap ", o.since, "-",
           o.until);
  }
  index_[key].push_back(entries_.size());
  entries_.push_back(std::move(e));
}

const OpEntry* OpTable::find(const std::string& domain, const std::string& op_type, int64_t opset) const {
  auto it = index_.find({domain, op_type});
  if (it == index_.end()) return nullptr;
  for (size_t idx : it->second) {
    const OpEntry& e = entries_[idx];
    if (opset >= e.since && opset <= e.until) return &e;
  }
  return nullptr;
}

std::vector<const OpEntry*> OpTable::find_all(const std::string& domain, const std::string& op_type) const {
  std::vector<const OpEntry*> r;
  auto it = index_.find({domain, op_type});
  if (it != index_.end())
    for (size_t idx : it->second) r.push_back(&entries_[idx]);
  return r;
}

std::vector<OpSupport> supported_ops() {
  std::vector<OpSupport> r;
  for (const auto& e : op_table().entries()) {
    OpSupport o{e.domain, e.op_type, e.since, e.until, e.types, e.note};
    // float16/bfloat16 inputs of a float32 kernel run through casts (runtime/low_precision.h).
    std::string added;
    for (DType t : {DType::kFloat16, DType::kBFloat16})
      if (runs_via_float32(e, t)) {
        o.types.push_back(t);
        added += str_cat(added.empty() ? "" : "/", dtype_name(t));
      }
    if (!added.empty()) o.note += str_cat(o.note.empty() ? "" : "; ", added, " computed in float32");
    r.push_back(std::move(o));
  }
  std::sort(r.begin(), r.end(), [](const OpSupport& a, const OpSupport& b) {
    return std::tie(a.domain, a.op_type, a.since_version) < std::tie(b.domain, b.op_type, b.since_version);
  });
  return r;
}

}  // namespace pointrt
