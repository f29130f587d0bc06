// Operator table rows of the ONNX sequence/optional family (contract in sequence.h).
#include "ops/families.h"
#include "ops/onnx/sequence/sequence.h"

namespace pointrt {

Family register_onnx_sequence() {
  using namespace sequence;
  Family family{"onnx/sequence"};
  OpTable& t = family.rows;
  auto row = [&](const char* op, int since, KernelFactory f, const char* note) {
    t.add({"", op, since, 21, {}, std::move(f), note});
  };
  row("SequenceEmpty", 11, make_sequence_empty, "an empty sequence of the attribute dtype");
  row("SequenceConstruct", 11, make_sequence_construct, "elements shared, not copied");
  row("SequenceInsert", 11, make_sequence_insert, "position in [-n, n], default the end");
  row("SequenceErase", 11, make_sequence_erase, "position in [-n, n-1], default the last");
  row("SequenceAt", 11, make_sequence_at, "position in [-n, n-1]; the element is shared, not copied");
  row("SequenceLength", 11, make_sequence_length, "int64 scalar");
  row("SplitToSequence", 11, make_split_to_sequence, "no split, a scalar chunk length or 1-D lengths; keepdims");
  row("ConcatFromSequence", 11, make_concat_from_sequence, "concatenate, or stack with new_axis; not empty");
  row("SequenceMap", 17, make_sequence_map, "body run per element through the executor; tensor or sequence extras");
  row("Optional", 15, make_optional, "of a tensor or a sequence, or empty with the type attribute");
  row("OptionalHasElement", 15, make_optional_has_element, "opset 18: a tensor, a sequence or no input too");
  row("OptionalGetElement", 15, make_optional_get_element, "an empty optional is an error; opset 18: passes tensors");
  return family;
}

}  // namespace pointrt
