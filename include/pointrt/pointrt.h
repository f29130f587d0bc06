// pointrt public API: load an ONNX model, prepare a session once, run it many times.
//
// Lifetimes:
//  - A Model owns the parsed graph and its weights. It may be destroyed after Sessions were
//    created from it: a Session keeps what it needs (shared ownership).
//  - A Session is prepared once (shape checks, constant folding, fusions, packed weights) and is
//    immutable afterwards: Session::run may be called concurrently from several threads; each
//    call uses its own run context (scratch buffers, sparse rulebook cache).
//  - Tensor is a reference-counted handle. A Tensor made with Tensor::wrap borrows the caller's
//    buffer without copying: the caller keeps it alive (and unchanged) for as long as any copy of
//    the handle is used, e.g. until Session::run returns for a feed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pointrt {

/// Element types. The numeric values are ONNX's TensorProto::DataType codes.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,  // elements are std::string (Tensor::allocate constructs them; data_as<std::string>())
  kBool = 9,    // stored as one byte, 0 or 1
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,      // the upper 16 bits of a float32
  kFloat8E4M3FN = 17,  // float8 formats (core/float8.h); one byte each
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  // 4-bit integers. ONNX packs two per byte (low nibble first); a Tensor holds them unpacked,
  // one per byte (int4 sign-extended like int8, uint4 like uint8), so every shape, size and
  // copy path stays byte-addressed; files and feeds are packed/unpacked at I/O (core/subbyte.h).
  kUInt4 = 21,
  kInt4 = 22,
};

/// Bytes per element in memory (sizeof(std::string) for string, 0 for undefined; 1 for int4/uint4,
/// stored unpacked).
size_t dtype_size(DType t);
/// Lower-case name as ONNX writes it ("float", "int64", "bool", ...).
const char* dtype_name(DType t);

using Shape = std::vector<int64_t>;
/// "[1, 3, 224, 224]"
std::string shape_to_string(const Shape& s);
/// Product of the dimensions (1 for a scalar, 0 if any dimension is 0). Throws Error naming the
/// shape when the product overflows int64.
int64_t shape_numel(const Shape& s);
/// Half the memory this process may use (the physical memory, or the cgroup limit when lower):
/// the default of SessionOptions::max_tensor_bytes.
size_t default_max_tensor_bytes();
/// "0.1.0".
const char* version();
/// One line per item: pointrt, ONNX, protobuf and oneDNN versions, compiler, build flags.
std::string build_info();

/// The single exception type pointrt throws. what() is one line that names the file, node,
/// tensor, the expected and the received value where they apply.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A dense, row-major, contiguous tensor.
class Tensor {
 public:
  Tensor() = default;
  /// New owned, uninitialised storage.
  static Tensor allocate(DType dtype, Shape shape);
  /// New owned storage filled with zeros.
  static Tensor zeros(DType dtype, Shape shape);
  /// Borrow `data` (no copy). The caller keeps it alive while the Tensor is used.
  static Tensor wrap(DType dtype, Shape shape, void* data);
  /// Share ownership of `owner`, whose memory starts at `data`.
  static Tensor wrap_shared(DType dtype, Shape shape, std::shared_ptr<void> owner, void* data);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return shape_numel(shape_); }
  /// numel() * dtype_size(dtype()); throws Error when that overflows.
  size_t nbytes() const;
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* data_as() {
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data_);
  }
  /// A deep copy with its own storage.
  Tensor clone() const;
  /// Same storage, another shape with the same number of elements.
  Tensor reshaped(Shape shape) const;
  /// True when the storage belongs to this handle family (not a borrowed buffer).
  bool owns_storage() const { return owner_ != nullptr; }

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

/// An ONNX sequence of tensors: immutable, cheap to copy (the elements are shared). Every element
/// has elem_type(); shapes may differ. Elements are ordinary Tensor handles (wrap()ped feeds keep
/// the borrowing rule of Tensor::wrap).
class Sequence {
 public:
  Sequence() = default;
  /// A sequence of `items`, each of element type `elem_type` (Error naming the first that is not).
  Sequence(DType elem_type, std::vector<Tensor> items);
  DType elem_type() const { return elem_type_; }
  size_t size() const { return items_ ? items_->size() : 0; }
  bool empty() const { return size() == 0; }
  /// Element i (Error when out of range).
  const Tensor& at(size_t i) const;
  /// The elements; empty for an empty sequence.
  const std::vector<Tensor>& items() const;

 private:
  DType elem_type_ = DType::kUndefined;
  std::shared_ptr<const std::vector<Tensor>> items_;
};

/// A value of any kind a graph input or output may have: a tensor, a sequence of tensors, or an
/// empty optional ("none"). An optional that holds something is simply that tensor or sequence.
/// A default-constructed AnyValue is undefined (nothing at all, like a default Tensor).
class AnyValue {
 public:
  enum class Kind : int32_t { kUndefined, kTensor, kSequence, kNone };
  AnyValue() = default;
  AnyValue(Tensor t);    // NOLINT(google-explicit-constructor): a tensor is a value
  AnyValue(Sequence s);  // NOLINT(google-explicit-constructor): so is a sequence
  /// An empty optional.
  static AnyValue none();
  Kind kind() const { return kind_; }
  bool defined() const { return kind_ != Kind::kUndefined; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }
  /// The tensor / the sequence; Error saying what it holds instead.
  const Tensor& tensor() const;
  const Sequence& sequence() const;
  /// "tensor float32 [2, 3]", "sequence of 3 int64", "none", "undefined".
  std::string describe() const;

 private:
  Kind kind_ = Kind::kUndefined;
  Tensor tensor_;
  Sequence sequence_;
};

/// One dimension of a declared shape: a fixed size, or a symbol ("N", "batch") or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when fixed
  std::string symbol;  // non-empty for a named symbolic dimension
  bool is_fixed() const { return value >= 0; }
};

/// A graph input or output as the model declares it.
struct ValueInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  bool has_shape = false;  // false when the model gives no shape at all
  std::vector<Dim> shape;  // of the tensor, or of each element of a sequence
  bool sequence = false;   // a sequence of tensors of element type `dtype`: seq(float32)
  bool optional = false;   // an optional of that tensor or sequence: optional(seq(float32))
  bool is_tensor() const { return !sequence && !optional; }
  /// "points: float32 [1, N, 3]", "boxes: seq(float32 [?, 4])", "mask: optional(bool [3])".
  std::string to_string() const;
  /// The type alone: "float32 [1, N, 3]", "seq(float32)".
  std::string type_string() const;
};

struct SessionOptions {
  /// Largest tensor (bytes) a kernel may allocate, checked before any memory is touched, during
  /// constant folding and runs; a larger one is an Error naming the node, the tensor and its shape.
  size_t max_tensor_bytes = default_max_tensor_bytes();
  /// Intra-op threads; 0 = all cores (OpenMP default).
  int intra_op_threads = 0;
  /// Graph optimisations (constant folding, Conv+BatchNorm+Relu fusion).
  bool optimize = true;
  /// Collect per-node timings; read them with Session::last_profile().
  bool profile = false;
  /// Memory pattern: once a run with given input shapes has been seen, plan the offsets of its
  /// intermediates in one arena block (sizes and lifetimes are then known) and serve later runs
  /// with the same input shapes from such a block; tensors whose size differs from the plan
  /// (data-dependent shapes) come from the buffer pool as before. Off: every intermediate comes
  /// from the buffer pool.
  bool memory_pattern = true;
  /// Values that RunHooks::on_value sees (and may replace) while a run computes them: value
  /// names of the file, or "*" for every value a node produces. Optimisations keep each of
  /// them as the file defines it (no fusion across it, plain layout), as they keep graph outputs.
  /// A value that prepare folds into a constant is not seen. For tools (compare, debugging).
  std::vector<std::string> observe;
  /// Plugin libraries (include/pointrt/plugin.h) whose operators this session may run, loaded in
  /// order when the session is made (a path without '/' is searched as dlopen searches). A library
  /// stays loaded until the process ends. Errors name the library: not found, no entry symbol,
  /// another plugin ABI version, an operator pointrt already serves.
  std::vector<std::string> plugins;
};

/// Per-run hooks for tools that look inside a run (pointrt compare, float16 emulation).
struct RunHooks {
  /// Called after each node for each of its outputs named by SessionOptions::observe, with the
  /// tensor the node produced (valid during the call only: clone it to keep it). Return an
  /// undefined Tensor to go on with it, or a tensor of the same dtype and shape that every later
  /// node (and the result, if it is a graph output) reads instead; its storage must stay alive and
  /// unchanged until run() returns. Called on the thread that called run().
  std::function<Tensor(const std::string& value_name, const Tensor& value)> on_value;
};

/// Intermediate-memory counters of a session (cumulative since it was created).
struct MemoryStats {
  size_t planned_signatures = 0;  // input-shape signatures with an arena plan
  size_t arena_bytes = 0;         // size of the largest arena plan
  size_t arena_allocations = 0;   // intermediates served from an arena block
  size_t pool_allocations = 0;    // intermediates served from the buffer pool
};

namespace detail {
struct ModelImpl;
struct SessionImpl;
}  // namespace detail

struct LoadOptions {
  /// External data files are resolved relative to the model's folder and, after resolving every
  /// symbolic link, must lie inside it; these folders are allowed as well (e.g. a weights store
  /// the model folder links to).
  std::vector<std::string> external_data_dirs;
};

/// A loaded ONNX model (graph + weights). Cheap to copy (shared).
class Model {
 public:
  /// Parse an .onnx file (a regular file); external data files are resolved relative to its
  /// folder and must be regular files inside it (or inside options.external_data_dirs).
  /// Throws Error naming the file for unreadable, truncated or malformed content.
  static Model load(const std::string& path, const LoadOptions& options = {});
  /// Parse from memory. `base_dir` resolves external data ("" = none allowed).
  static Model load_from_bytes(const void* data, size_t size, const std::string& base_dir = "",
                               const std::string& display_name = "<memory>", const LoadOptions& options = {});

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  /// domain ("" for ai.onnx) -> opset version.
  const std::map<std::string, int64_t>& opsets() const;
  std::string path() const;
  std::shared_ptr<detail::ModelImpl> impl() const { return impl_; }

 private:
  std::shared_ptr<detail::ModelImpl> impl_;
};

/// Per-node timing of one run (with SessionOptions::profile).
struct NodeProfile {
  std::string node_name;
  std::string op_type;
  double milliseconds = 0;
};

/// A prepared model. Thread-safe: run() may be called from several threads at once.
class Session {
 public:
  /// Prepare: check operators (all unsupported ones are reported together in one Error),
  /// fold constants, fuse, build kernels and packed weights.
  explicit Session(const Model& model, const SessionOptions& options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;

  /// Run with named feeds. Feeds are used without copying. Returns the graph outputs in the
  /// model's order. Throws Error on a missing feed or a feed with the wrong dtype/rank/shape.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds) const;
  /// Same, calling `hooks` as the run goes (see RunHooks). A run with hooks does not use or
  /// record memory-pattern arenas: replaced values end their lifetime early.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds, const RunHooks& hooks) const;
  /// Same, writing into caller-provided output tensors (dtype and shape must match the result).
  void run(const std::map<std::string, Tensor>& feeds, std::vector<Tensor>& outputs_into) const;
  /// Run with feeds of any kind (tensors, sequences, empty optionals), for models whose inputs or
  /// outputs are sequences or optionals (ValueInfo::sequence / optional); works for plain tensor
  /// models too. A sequence feed's elements are used without copying; a returned sequence's
  /// elements are the caller's (copies where they would share the session's constants or a feed,
  /// as for tensor outputs). An optional input takes a tensor, a sequence or
  /// AnyValue::none(); an optional output left empty by the model comes back as none(). Throws
  /// Error naming the input on a missing feed or one of the wrong kind ("input 's' is declared
  /// seq(float32) but gets a tensor"). Thread-safe like run(); memory-pattern arenas as for run().
  std::vector<AnyValue> run_any(const std::map<std::string, AnyValue>& feeds) const;

  /// Per-node timings of the most recent run on this thread (empty unless profiling).
  std::vector<NodeProfile> last_profile() const;
  /// Nodes after optimisation: "op_type:name" in execution order (for inspection and tests).
  std::vector<std::string> execution_plan() const;
  /// Arena and pool counters (see SessionOptions::memory_pattern).
  MemoryStats memory_stats() const;

 private:
  std::unique_ptr<detail::SessionImpl> impl_;
};

/// One row of the operator table.
struct OpSupport {
  std::string domain;  // "" = ai.onnx, "pointrt"
  std::string op_type;
  int since_version;         // first opset this kernel serves
  int until_version;         // last opset this kernel serves
  std::vector<DType> types;  // element types of the main ("T") input
  std::string note;
};
/// Every supported (domain, op, opset range), sorted.
std::vector<OpSupport> supported_ops();

}  // namespace pointrt
