// SHA-256 of bytes and files, as lowercase hex: model identities, package
// manifests, embedding descriptors. Through OpenSSL's libcrypto (a well-kept
// implementation, never our own).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace semroute {

std::string sha256_hex(std::string_view bytes);
// Reads the file in 1 MiB pieces (memory does not follow its size). Throws
// semroute::Error (kNotFound) when it cannot be read.
std::string sha256_of_file(const std::filesystem::path& path);

}  // namespace semroute
