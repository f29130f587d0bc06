#include "core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/common.h"

namespace pointrt {

namespace {
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}
}  // namespace

// "x.npy:" or "tensor 'w': 'dir/w.bin'" at the start of every message.
std::string RegularFile::subject() const { return what_.empty() ? path_ + ":" : what_ + ": '" + path_ + "'"; }

RegularFile::RegularFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    if (what_.empty()) fail(path_, ": cannot open (", std::strerror(errno), ")");
    fail(what_, ": cannot open '", path_, "' (", std::strerror(errno), ")");
  }
  struct stat st {};
  int rc = fstat(fd_, &st);
  if (rc != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    if (rc != 0) fail(subject(), " cannot be read (", std::strerror(errno), ")");
    fail(subject(), " is ", file_kind(st.st_mode), ", not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(uint64_t offset, void* dst, size_t length) const {
  if (offset > size_ || length > size_ - offset)
    fail(subject(), " has ", size_, " bytes; reading ", length, " at offset ", offset, " goes past its end");
  char* p = static_cast<char*>(dst);
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd_, p + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(subject(), " could not be read (", std::strerror(errno), ")");
    if (n == 0) fail(subject(), " ended after ", offset + done, " bytes (it shrank while being read)");
    done += static_cast<size_t>(n);
  }
}

std::string RegularFile::read_all(uint64_t max_bytes) const {
  if (size_ > max_bytes) fail(subject(), " has ", size_, " bytes, more than the ", max_bytes, " allowed");
  std::string bytes(static_cast<size_t>(size_), '\0');
  read_at(0, bytes.data(), bytes.size());
  return bytes;
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes) {
  return RegularFile(path).read_all(max_bytes);
}

}  // namespace pointrt
