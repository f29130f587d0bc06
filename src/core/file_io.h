// Reading files named by untrusted input (models, external data, arrays, point clouds): regular
// files only (a FIFO or a device would block or never end, a directory is no data), sizes known
// before reading, reads bounded by them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pointrt {

/// An open regular file (read-only). Errors name `path`.
class RegularFile {
 public:
  /// Opens without blocking and refuses anything but a regular file: "<path>: is a directory, not
  /// a regular file", "<path>: cannot open (No such file or directory)". A non-empty `what`
  /// starts messages instead ("tensor 'w': 'dir/w.bin' is a FIFO, not a regular file").
  explicit RegularFile(const std::string& path, const std::string& what = "");
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  uint64_t size() const { return size_; }
  /// Read exactly `length` bytes at `offset` into `dst`; Error when the file ends first.
  void read_at(uint64_t offset, void* dst, size_t length) const;
  /// The whole file; Error when it is larger than `max_bytes`.
  std::string read_all(uint64_t max_bytes) const;

 private:
  std::string subject() const;
  std::string path_, what_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// The whole of a regular file (up to `max_bytes`, default 4 GiB).
std::string read_regular_file(const std::string& path, uint64_t max_bytes = uint64_t(1) << 32);

}  // namespace pointrt
