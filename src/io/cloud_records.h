// Shared by the PLY and PCD readers: scalar fields of a point record, decoded into float32
// [N, F] with x, y, z first; ASCII numbers parsed strictly.
#pragma once

#include <string>
#include <vector>

#include "pointrt/pointrt.h"

namespace pointrt {

/// A scalar field in a point record.
struct CloudField {
  std::string name;
  char kind = 'f';       // 'f' float, 'i' signed, 'u' unsigned
  int size = 4;          // bytes: 1, 2, 4 or 8
  bool padding = false;  // occupies bytes, is not a column (PCD "_" fields)
};

/// The records' layout: which output column each field goes to (x, y, z first).
struct CloudLayout {
  std::vector<CloudField> fields;
  std::vector<int> column;  // per field: output column, -1 for padding
  int columns = 0;
  size_t record_bytes = 0;
};

/// Order the columns (x, y, z, then the rest in file order); Error naming `where` when x, y or
/// z is missing or a name appears twice.
CloudLayout make_cloud_layout(std::vector<CloudField> fields, const std::string& where);

/// Decode `count` records starting at data[0] (size bytes available). Binary: exactly
/// count * record_bytes unless `more_follows`; ASCII: whitespace-separated numbers, nothing but
/// whitespace after the last unless `more_follows`. The claimed count is checked against `size`
/// before memory is reserved.
Tensor decode_cloud(const char* data, size_t size, int64_t count, const CloudLayout& layout, bool ascii,
                    bool more_follows, const std::string& where);

/// The next line of a header (without '\n' or '\r') from data[pos]; false at the end.
bool next_header_line(const char* data, size_t size, size_t& pos, std::string& line);

/// Whitespace-separated words of a header line.
std::vector<std::string> split_words(const std::string& line);

}  // namespace pointrt
