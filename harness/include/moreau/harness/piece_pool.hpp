#pragma once
// Independent pieces of an experiment run at once: a published-scale experiment whose pieces
// share nothing (column_drop: a settling per family, then two releases from each settled
// column) runs them on `workers` threads, each piece on one thread, instead of one after the
// other. Each piece computes what it would alone (its own world, stepper and checkpoint), so
// the numbers do not depend on the workers; the caller reports the pieces' results in its own
// fixed order after wait().
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

#include "moreau/harness/resumable_run.hpp"

namespace moreau::resumable {

class PiecePool {
 public:
  // workers >= 1; with 1 the pieces run on the calling thread inside wait(), in queue order.
  explicit PiecePool(int workers);
  // Queues a piece at the back, or at the front (`first`): a piece that continues one just
  // finished (a release after its settling) may be queued from inside a running piece.
  void add(std::function<void()> piece, bool first = false);
  // Runs the queued pieces (and those they add) until none is left; rethrows the first
  // exception a piece threw, after the pieces already running have ended (no new one starts).
  void wait();

 private:
  void work();

  int workers_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  std::exception_ptr failure_;
};

// A stream whose lines reach `target` whole: the progress lines of pieces running at once
// would otherwise interleave within a line. Writes a line under one lock shared by every
// LineStream of the process. One LineStream per thread (per piece): like any std::ostream it
// is not to be written from two threads at once.
class LineStream : public std::ostream {
 public:
  explicit LineStream(std::ostream& target);
  ~LineStream() override;

 private:
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(std::ostream& target) : target_(target) {}
    int sync() override;

   protected:
    int_type overflow(int_type c) override;

   private:
    std::ostream& target_;
    std::string line_;
  };
  Buffer buffer_;
};

// The persistence of the piece `piece` (Persistence::child) with its progress lines written
// through `progress`, a LineStream made here on the experiment's stream: a piece running beside
// others writes whole lines. `progress` must outlive the piece's use of the result.
Persistence piece_persistence(const Persistence& persistence, const std::string& piece,
                              std::unique_ptr<LineStream>& progress);

}  // namespace moreau::resumable
