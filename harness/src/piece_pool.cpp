#include "moreau/harness/piece_pool.hpp"

#include <thread>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau::resumable {

PiecePool::PiecePool(int workers) : workers_(workers) {
  if (workers < 1)
    throw InputError("pieces run at once must be >= 1, got " + std::to_string(workers));
}

void PiecePool::add(std::function<void()> piece, bool first) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (first) {
      queue_.push_front(std::move(piece));
    } else {
      queue_.push_back(std::move(piece));
    }
  }
  changed_.notify_one();
}

void PiecePool::work() {
  for (;;) {
    std::function<void()> piece;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Done when nothing is queued and nothing runs that could still queue a piece.
      changed_.wait(lock, [this] { return !queue_.empty() || running_ == 0 || failure_; });
      if (failure_ || queue_.empty()) break;
      piece = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    try {
      piece();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!failure_) failure_ = std::current_exception();
      queue_.clear();
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      --running_;
    }
    changed_.notify_all();
  }
  changed_.notify_all();
}

void PiecePool::wait() {
  if (workers_ == 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (int w = 0; w < workers_; ++w) threads.emplace_back([this] { work(); });
    for (std::thread& t : threads) t.join();
  }
  if (failure_) std::rethrow_exception(failure_);
}

namespace {
std::mutex& line_mutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

LineStream::LineStream(std::ostream& target) : std::ostream(nullptr), buffer_(target) {
  rdbuf(&buffer_);
}

LineStream::~LineStream() { buffer_.pubsync(); }

LineStream::Buffer::int_type LineStream::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  line_.push_back(traits_type::to_char_type(c));
  if (c == '\n') sync();
  return c;
}

int LineStream::Buffer::sync() {
  if (line_.empty()) return 0;
  const std::lock_guard<std::mutex> lock(line_mutex());
  target_ << line_ << std::flush;
  line_.clear();
  return 0;
}

Persistence piece_persistence(const Persistence& persistence, const std::string& piece,
                              std::unique_ptr<LineStream>& progress) {
  Persistence own = persistence.child(piece);
  if (own.progress != nullptr) {
    progress = std::make_unique<LineStream>(*own.progress);
    own.progress = progress.get();
  }
  return own;
}

}  // namespace moreau::resumable
