// Sequence and AnyValue (include/pointrt/pointrt.h) and the type strings of ValueInfo.
#include <sstream>

#include "core/common.h"

namespace pointrt {

Sequence::Sequence(DType elem_type, std::vector<Tensor> items) : elem_type_(elem_type) {
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].dtype() != elem_type)
      fail("a sequence of ", dtype_name(elem_type), " cannot hold element ", i, " of type ",
           dtype_name(items[i].dtype()));
  items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
}

const Tensor& Sequence::at(size_t i) const {
  if (i >= size()) fail("sequence element ", i, " is out of range (the sequence has ", size(), ")");
  return (*items_)[i];
}

const std::vector<Tensor>& Sequence::items() const {
  static const std::vector<Tensor> empty;
  return items_ ? *items_ : empty;
}

AnyValue::AnyValue(Tensor t) : kind_(t.defined() ? Kind::kTensor : Kind::kUndefined), tensor_(std::move(t)) {}

AnyValue::AnyValue(Sequence s) : kind_(Kind::kSequence), sequence_(std::move(s)) {}

AnyValue AnyValue::none() {
  AnyValue v;
  v.kind_ = Kind::kNone;
  return v;
}

const Tensor& AnyValue::tensor() const {
  if (kind_ != Kind::kTensor) fail("expected a tensor, got ", describe());
  return tensor_;
}

const Sequence& AnyValue::sequence() const {
  if (kind_ != Kind::kSequence) fail("expected a sequence, got ", describe());
  return sequence_;
}

std::string AnyValue::describe() const {
  switch (kind_) {
    case Kind::kTensor: return str_cat("a tensor ", dtype_name(tensor_.dtype()), " ", shape_to_string(tensor_.shape()));
    case Kind::kSequence:
      return str_cat("a sequence of ", sequence_.size(), " ", dtype_name(sequence_.elem_type()), " tensors");
    case Kind::kNone: return "an empty optional";
    default: return "nothing";
  }
}

namespace {

std::string dims_string(const std::vector<Dim>& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ", ";
    if (shape[i].is_fixed())
      os << shape[i].value;
    else if (!shape[i].symbol.empty())
      os << shape[i].symbol;
    else
      os << "?";
  }
  os << "]";
  return os.str();
}

}  // namespace

std::string ValueInfo::type_string() const {
  if (is_tensor())
    return str_cat(dtype_name(dtype), " ", has_shape ? dims_string(shape) : std::string("(shape unknown)"));
  std::string inner = dtype_name(dtype);
  if (has_shape) inner += " " + dims_string(shape);
  if (sequence) inner = "seq(" + inner + ")";
  return optional ? "optional(" + inner + ")" : inner;
}

std::string ValueInfo::to_string() const { return name + ": " + type_string(); }

}  // namespace pointrt
