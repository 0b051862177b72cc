#include "moreau/harness/cache_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "moreau/core/error.hpp"

namespace moreau {

CacheLock::CacheLock(const std::filesystem::path& entry, const std::string& waiting) {
  std::filesystem::create_directories(entry.parent_path());
  const std::string lock = entry.string() + ".lock";
  descriptor_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (descriptor_ < 0)
    throw InputError(lock + ": cannot open the cache's lock file: " + std::strerror(errno));
  if (::flock(descriptor_, LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK) {
    std::cout << waiting << std::endl;
    int result;
    do result = ::flock(descriptor_, LOCK_EX);
    while (result != 0 && errno == EINTR);
    if (result == 0) return;
  }
  const std::string reason = std::strerror(errno);
  ::close(descriptor_);
  throw InputError(lock + ": cannot lock the cache entry: " + reason);
}

CacheLock::~CacheLock() { ::close(descriptor_); }  // closing releases the flock

}  // namespace moreau
