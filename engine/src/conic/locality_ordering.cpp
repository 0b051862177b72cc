#include "locality_ordering.hpp"

#include <algorithm>
#include <numeric>

namespace moreau::conic::detail {
namespace {

// The body graph in compressed rows: neighbours of b in [start[b], start[b + 1]), sorted by
// (degree, index) so that a breadth-first visit takes them in Cuthill-McKee's order. A pair of
// bodies with several cones (non-convex bodies) is listed once.
struct BodyGraph {
  std::vector<int> start;
  std::vector<int> neighbour;
  int degree(int b) const { return start[b + 1] - start[b]; }
};

BodyGraph body_graph(int bodies, const std::vector<std::array<int, 2>>& cones) {
  std::vector<std::array<int, 2>> edges;
  edges.reserve(2 * cones.size());
  for (const std::array<int, 2>& cone : cones) {
    if (cone[0] < 0 || cone[1] < 0 || cone[0] == cone[1]) continue;
    edges.push_back({cone[0], cone[1]});
    edges.push_back({cone[1], cone[0]});
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  BodyGraph graph{std::vector<int>(static_cast<std::size_t>(bodies) + 1, 0),
                  std::vector<int>(edges.size())};
  for (const std::array<int, 2>& edge : edges) ++graph.start[edge[0] + 1];
  for (int b = 0; b < bodies; ++b) graph.start[b + 1] += graph.start[b];
  for (std::size_t e = 0; e < edges.size(); ++e) graph.neighbour[e] = edges[e][1];
  for (int b = 0; b < bodies; ++b) {
    std::sort(graph.neighbour.begin() + graph.start[b],
              graph.neighbour.begin() + graph.start[b + 1], [&](int x, int y) {
                const int dx = graph.degree(x), dy = graph.degree(y);
                return dx != dy ? dx < dy : x < y;
              });
  }
  return graph;
}

// Breadth-first visit of root's component in Cuthill-McKee order, appended to `order`; `level`
// (-1: not visited) receives each body's distance from root. Returns the first index of the
// last level in `order`.
std::size_t breadth_first(const BodyGraph& graph, int root, std::vector<int>& level,
                          std::vector<int>& order) {
  const std::size_t first = order.size();
  level[root] = 0;
  order.push_back(root);
  std::size_t last_level_start = first;
  for (std::size_t next = first; next < order.size(); ++next) {
    const int b = order[next];
    if (level[b] > level[order[last_level_start]]) last_level_start = next;
    for (int j = graph.start[b]; j < graph.start[b + 1]; ++j) {
      const int n = graph.neighbour[j];
      if (level[n] >= 0) continue;
      level[n] = level[b] + 1;
      order.push_back(n);
    }
  }
  return last_level_start;
}

// A pseudo-peripheral body of start's component (George & Liu 1979): from a body, walk to a
// lowest-degree body of the last breadth-first level while the eccentricity grows.
int pseudo_peripheral(const BodyGraph& graph, int start, std::vector<int>& scratch_level) {
  std::vector<int> order;
  int root = start;
  int eccentricity = -1;
  for (;;) {
    order.clear();
    const std::size_t last = breadth_first(graph, root, scratch_level, order);
    const int depth = scratch_level[order.back()];
    int candidate = order[last];
    for (std::size_t i = last; i < order.size(); ++i) {
      if (graph.degree(order[i]) < graph.degree(candidate)) candidate = order[i];
    }
    for (const int b : order) scratch_level[b] = -1;
    if (depth <= eccentricity) return root;
    eccentricity = depth;
    root = candidate;
  }
}

}  // namespace

std::vector<int> cuthill_mckee_ranks(int bodies, const std::vector<std::array<int, 2>>& cones) {
  const BodyGraph graph = body_graph(bodies, cones);
  std::vector<int> level(static_cast<std::size_t>(bodies), -1);
  std::vector<int> scratch(static_cast<std::size_t>(bodies), -1);
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(bodies));
  for (int b = 0; b < bodies; ++b) {
    if (level[b] >= 0 || graph.degree(b) == 0) continue;
    breadth_first(graph, pseudo_peripheral(graph, b, scratch), level, order);
  }
  for (int b = 0; b < bodies; ++b) {
    if (graph.degree(b) == 0) order.push_back(b);
  }
  std::vector<int> rank(static_cast<std::size_t>(bodies));
  for (int i = 0; i < bodies; ++i) rank[order[i]] = i;
  return rank;
}

SweepOrder separators_last(const std::vector<int>& rank,
                           const std::vector<std::array<int, 2>>& cones, int parts) {
  const int bodies = static_cast<int>(rank.size());
  auto part_of = [&](int r) {
    return static_cast<int>(static_cast<long>(r) * parts / std::max(bodies, 1));
  };
  // separator[r]: the body of rank r touches a later range.
  std::vector<char> separator(static_cast<std::size_t>(bodies), 0);
  for (const std::array<int, 2>& cone : cones) {
    if (cone[0] < 0 || cone[1] < 0) continue;
    const int a = rank[cone[0]], b = rank[cone[1]];
    if (part_of(a) != part_of(b)) separator[std::min(a, b)] = 1;
  }
  std::vector<int> new_rank_of(static_cast<std::size_t>(bodies));  // by old rank
  SweepOrder out{std::vector<int>(static_cast<std::size_t>(bodies)),
                 std::vector<int>(static_cast<std::size_t>(parts) + 1, 0)};
  int next = 0;
  for (int r = 0; r < bodies; ++r) {
    if (separator[r]) continue;
    new_rank_of[r] = next++;
    ++out.part_begin[part_of(r) + 1];
  }
  for (int t = 0; t < parts; ++t) out.part_begin[t + 1] += out.part_begin[t];
  for (int r = 0; r < bodies; ++r) {
    if (separator[r]) new_rank_of[r] = next++;
  }
  for (int b = 0; b < bodies; ++b) out.rank[b] = new_rank_of[rank[b]];
  return out;
}

}  // namespace moreau::conic::detail
