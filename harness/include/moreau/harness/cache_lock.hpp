#pragma once
// An exclusive lock on one entry of a cache that several processes share (a settled packing in
// the build tree): the first process to take it builds the entry, the others wait and then read
// what it wrote instead of building it again beside it. The lock is an advisory flock(2) on a
// file beside the entry, so it ends with its process however that process ends.

#include <filesystem>
#include <string>

namespace moreau {

class CacheLock {
 public:
  // Takes the lock of `entry` (creating `entry` + ".lock" and its folder as needed), waiting
  // while another process holds it; `waiting` is printed once when it has to wait.
  CacheLock(const std::filesystem::path& entry, const std::string& waiting);
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int descriptor_ = -1;
};

}  // namespace moreau
