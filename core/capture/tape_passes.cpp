#include "tape_passes.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "../dtype.hpp"
#include "../tensor.hpp"
#include "../view_extent.hpp"

namespace nnp::core::capture {
namespace {

// Slots whose last view is the one they write and whose others they only read.
bool writes_last_view_only(const char* name) {
  static const char* const kSlots[] = {
      "copy",    "fill",   "unary",        "binary", "where",         "reduce",           "gemm",
      "softmax", "gather", "index_select", "random", "gemm_epilogue", "elementwise_chain"};
  for (const char* s : kSlots)
    if (std::strcmp(s, name) == 0) return true;
  return false;
}

// Where the views a slot writes begin among a call's views: the last one
// for the slots above, the third (grad_in, then column_sums) for
// relu_backward; SIZE_MAX where the pass does not know.
size_t first_written_view(const char* name, size_t views) {
  if (writes_last_view_only(name)) return views == 0 ? SIZE_MAX : views - 1;
  if (std::strcmp(name, "relu_backward") == 0) return 2;
  return SIZE_MAX;
}

// The bytes a view reaches, [lo, hi) (strides are never negative).
struct Range {
  const char* lo = nullptr;
  const char* hi = nullptr;
  bool overlaps(const Range& o) const { return lo < o.hi && o.lo < hi; }
};

Range range_of(const nnp_view& v) {
  const int64_t span = view_span(v);
  if (span == 0) return {};
  const char* lo = static_cast<const char*>(v.data);
  return {lo, lo + span * static_cast<int64_t>(dtype_size(v.dtype))};
}

bool same_view(const nnp_view& a, const nnp_view& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim) return false;
  for (int32_t d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
  return true;
}

// Two views of the same contiguous bytes as the same elements (one may be
// the other flattened).
bool same_elements(const nnp_view& a, const nnp_view& b) {
  return same_view(a, b) || (a.data == b.data && a.dtype == b.dtype && view_numel(a) == view_numel(b) &&
                             view_is_contiguous(a) && view_is_contiguous(b));
}

// The tape as the passes read it: each call's views and the byte ranges
// they reach, and which of the blocks the capture made are private.
class TapeView {
 public:
  explicit TapeView(Tape& tape) : tape_(tape) {
    std::map<const Storage*, int32_t> holds;
    for (const Storage* s : tape.allocated) ++holds[s];
    for (const Storage* s : tape.viewed) ++holds[s];
    for (const Storage* s : tape.allocated)
      if (s->data && s->refs.load(std::memory_order_acquire) == holds[s])
        private_.push_back({static_cast<const char*>(s->data), static_cast<const char*>(s->data) + s->bytes});
    refresh();
  }
  // After calls were removed or rewritten.
  void refresh() {
    views_.assign(tape_.calls.size(), {});
    for (size_t i = 0; i < tape_.calls.size(); ++i) tape_.calls[i]->views(views_[i]);
  }
  size_t size() const { return tape_.calls.size(); }
  RecordedCall& call(size_t i) const { return *tape_.calls[i]; }
  const std::vector<nnp_view*>& views(size_t i) const { return views_[i]; }
  bool named(size_t i, const char* name) const { return std::strcmp(call(i).name(), name) == 0; }

  // The private block a view lies wholly in, or a null range.
  Range private_block(const nnp_view& v) const {
    const Range r = range_of(v);
    for (const Range& b : private_)
      if (r.lo >= b.lo && r.hi <= b.hi && r.lo < r.hi) return b;
    return {};
  }
  bool touches(size_t i, const Range& r) const {
    for (const nnp_view* v : views_[i])
      if (range_of(*v).overlaps(r)) return true;
    return false;
  }
  // The nearest call before `before` that touches r (SIZE_MAX: none).
  size_t last_toucher(size_t before, const Range& r) const {
    for (size_t j = before; j-- > 0;)
      if (touches(j, r)) return j;
    return SIZE_MAX;
  }
  bool touched_in(size_t from, size_t to, const Range& r, size_t except_a = SIZE_MAX,
                  size_t except_b = SIZE_MAX) const {
    for (size_t k = from; k < to && k < size(); ++k)
      if (k != except_a && k != except_b && touches(k, r)) return true;
    return false;
  }
  // Whether any call in [from, to) may write r: a view it writes reaches r,
  // or it is a call whose outputs the passes do not know and it touches r.
  bool written_in(size_t from, size_t to, const Range& r) const {
    for (size_t k = from; k < to && k < size(); ++k) {
      const size_t first = first_written_view(call(k).name(), views_[k].size());
      for (size_t v = first == SIZE_MAX ? 0 : first; v < views_[k].size(); ++v)
        if (range_of(*views_[k][v]).overlaps(r)) return true;
    }
    return false;
  }
  // The nearest call after `after` that touches r (SIZE_MAX: none).
  size_t next_toucher(size_t after, const Range& r) const {
    for (size_t j = after + 1; j < size(); ++j)
      if (touches(j, r)) return j;
    return SIZE_MAX;
  }
  // Whether call j writes `out` as its one output and reads nothing in r.
  bool produces(size_t j, const nnp_view& out, const Range& r) const {
    if (!writes_last_view_only(call(j).name()) || views_[j].empty()) return false;
    if (!same_elements(*views_[j].back(), out)) return false;
    for (size_t k = 0; k + 1 < views_[j].size(); ++k)
      if (range_of(*views_[j][k]).overlaps(r)) return false;
    return true;
  }
  const std::vector<Range>& private_blocks() const { return private_; }
  void erase(std::vector<size_t> indices) {
    std::sort(indices.rbegin(), indices.rend());
    for (size_t i : indices) tape_.calls.erase(tape_.calls.begin() + static_cast<ptrdiff_t>(i));
    refresh();
  }
  // `call` in the place of call `at`; the others of `gone` removed.
  void replace(size_t at, std::unique_ptr<RecordedCall> call, std::vector<size_t> gone) {
    tape_.calls[at] = std::move(call);
    gone.erase(std::remove(gone.begin(), gone.end(), at), gone.end());
    erase(std::move(gone));
  }

 private:
  Tape& tape_;
  std::vector<Range> private_;
  std::vector<std::vector<nnp_view*>> views_;
};

// copy(src, dst) where src is a private temporary written just before by
// one call and read by nothing else: that call writes dst instead.
size_t elide_copies(TapeView& t) {
  size_t removed = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t.named(i, "copy") || t.views(i).size() != 2) continue;
    const nnp_view src = *t.views(i)[0], dst = *t.views(i)[1];
    if (src.dtype != dst.dtype || view_numel(src) != view_numel(dst) || !view_is_contiguous(src) ||
        !view_is_contiguous(dst))
      continue;
    if (src.ndim != dst.ndim || !std::equal(src.shape, src.shape + src.ndim, dst.shape)) continue;
    const Range block = t.private_block(src);
    if (block.lo == nullptr) continue;
    const size_t p = t.last_toucher(i, block);
    if (p == SIZE_MAX || !t.produces(p, src, block)) continue;
    const Range out = range_of(dst);
    if (t.touched_in(p + 1, i, out) || t.touched_in(i + 1, t.size(), block)) continue;
    bool reads_out = false;  // the producer would read what it now writes
    for (size_t k = 0; k + 1 < t.views(p).size(); ++k) reads_out = reads_out || range_of(*t.views(p)[k]).overlaps(out);
    if (reads_out) continue;
    t.views(p).back()->data = dst.data;
    t.erase({i});
    ++removed;
    --i;
  }
  return removed;
}

// The contiguous elements of v seen as a row-major [m, n] matrix.
nnp_view as_matrix(const nnp_view& v, int64_t m, int64_t n) {
  nnp_view out{};
  out.data = v.data;
  out.dtype = v.dtype;
  out.ndim = 2;
  out.shape[0] = m;
  out.shape[1] = n;
  out.strides[0] = n;
  out.strides[1] = 1;
  return out;
}

// The first n contiguous elements of v as a vector [n].
nnp_view as_vector(const nnp_view& v, int64_t n) {
  nnp_view out{};
  out.data = v.data;
  out.dtype = v.dtype;
  out.ndim = 1;
  out.shape[0] = n;
  out.strides[0] = 1;
  return out;
}

// The 1-D bias a [M, N] broadcast view (strides 0, 1) reads, or false.
bool bias_of(const nnp_view& v, int64_t m, int64_t n, nnp_view& bias) {
  if (v.ndim != 2 || v.shape[0] != m || v.shape[1] != n || v.strides[0] != 0 || (n > 1 && v.strides[1] != 1))
    return false;
  bias = as_vector(v, n);
  return true;
}

// gemm(a, b, t1); binary(ADD, t1, bias, t2) [; unary(RELU, t2, t3)] on
// private t1 (and t2) -> gemm_epilogue(a, b, bias, activation, out).
size_t fuse_epilogues(TapeView& t) {
  size_t removed = 0;
  for (size_t q = 0; q < t.size(); ++q) {
    if (!t.named(q, "binary") || t.call(q).op() != NNP_BINARY_ADD || t.views(q).size() != 3) continue;
    const nnp_view out = *t.views(q)[2];
    if (out.dtype != NNP_F32 || out.ndim != 2 || !view_is_contiguous(out)) continue;
    const int64_t m = out.shape[0], n = out.shape[1];
    nnp_view bias, product;
    if (bias_of(*t.views(q)[1], m, n, bias))
      product = *t.views(q)[0];
    else if (bias_of(*t.views(q)[0], m, n, bias))
      product = *t.views(q)[1];
    else
      continue;
    if (product.dtype != NNP_F32 || !view_is_contiguous(product) || bias.dtype != NNP_F32) continue;
    const Range block1 = t.private_block(product);
    if (block1.lo == nullptr) continue;
    const size_t p = t.last_toucher(q, block1);
    if (p == SIZE_MAX || !t.named(p, "gemm") || !t.produces(p, product, block1)) continue;
    if (t.touched_in(q + 1, t.size(), block1)) continue;
    // A ReLU of the sum, the sum read by nothing else.
    size_t r = SIZE_MAX;
    nnp_view result = out;
    const Range block2 = t.private_block(out);
    if (block2.lo != nullptr) {
      size_t next = q + 1;
      while (next < t.size() && !t.touches(next, block2)) ++next;
      if (next < t.size() && t.named(next, "unary") && t.call(next).op() == NNP_UNARY_RELU &&
          t.views(next).size() == 2 && same_elements(*t.views(next)[0], out) &&
          !t.touched_in(next + 1, t.size(), block2) && view_is_contiguous(*t.views(next)[1]) &&
          t.views(next)[1]->dtype == NNP_F32 && !range_of(*t.views(next)[1]).overlaps(block2)) {
        r = next;
        result = out;  // its elements, shaped as the product
        result.data = t.views(next)[1]->data;
      }
    }
    const size_t last = r != SIZE_MAX ? r : q;
    const nnp_view a = *t.views(p)[0], b = *t.views(p)[1];
    // The fused call runs where the last one ran: what it reads must not
    // change, and what it writes must not be used, from the product on.
    bool moved_safely = true;
    for (const Range& x : {range_of(a), range_of(b), range_of(bias), range_of(result)})
      if (t.touched_in(p + 1, last, x, q, r)) moved_safely = false;
    if (!moved_safely) continue;
    std::unique_ptr<RecordedCall> fused = gemm_epilogue_call(
        t.call(p).context(), a, b, bias, r != SIZE_MAX ? NNP_ACTIVATION_RELU : NNP_ACTIVATION_NONE, result);
    if (!fused) continue;
    std::vector<size_t> gone = {p, q};
    if (r != SIZE_MAX) gone.push_back(r);
    t.replace(last, std::move(fused), gone);  // the fused call takes the last one's place
    removed += gone.size() - 1;
    q = static_cast<size_t>(-1);  // indices moved: look again from the start
  }
  return removed;
}

// An f32 view that reads one element at every position (all strides 0),
// filled with +0 by the last call before `before` that wrote it.
bool is_broadcast_zero(const TapeView& t, const nnp_view& v, size_t before) {
  if (v.dtype != NNP_F32) return false;
  for (int32_t d = 0; d < v.ndim; ++d)
    if (v.strides[d] != 0) return false;
  const Range element = range_of(v);
  const size_t w = t.last_toucher(before, element);
  double value = 1;
  if (w == SIZE_MAX || !t.call(w).fills_with(value) || value != 0 || std::signbit(value)) return false;
  const Range filled = range_of(*t.views(w).back());
  return filled.lo <= element.lo && element.hi <= filled.hi;
}

// A contiguous view of `elements` elements of dtype.
bool contiguous_of(const nnp_view& v, nnp_dtype dtype, int64_t elements) {
  return v.dtype == dtype && view_numel(v) == elements && elements > 0 && view_is_contiguous(v);
}

// ReLU's backward as the eager step records it,
//   binary(LE, result, 0, mask); where(mask, 0, grad, grad_in)
// on a private mask, and the bias gradient after it,
//   reduce(SUM, grad_in seen as [N, M], column_sums)
// -> relu_backward(result, grad, grad_in, column_sums) where the backend
// has that kernel: one pass over the gradient instead of three.
size_t fuse_relu_backward(TapeView& t) {
  size_t removed = 0;
  for (size_t w = 0; w < t.size(); ++w) {
    if (!t.named(w, "where") || t.views(w).size() != 4) continue;
    // Elementwise ops see contiguous operands flattened: any shape will do.
    const nnp_view mask = *t.views(w)[0], zero = *t.views(w)[1], grad = *t.views(w)[2], grad_in = *t.views(w)[3];
    const int64_t elements = view_numel(grad_in);
    if (!contiguous_of(grad_in, NNP_F32, elements) || !contiguous_of(grad, NNP_F32, elements) ||
        !contiguous_of(mask, NNP_BOOL, elements) || !is_broadcast_zero(t, zero, w))
      continue;
    const Range mask_block = t.private_block(mask);
    if (mask_block.lo == nullptr || t.touched_in(w + 1, t.size(), mask_block)) continue;
    const size_t p = t.last_toucher(w, mask_block);
    if (p == SIZE_MAX || !t.named(p, "binary") || t.call(p).op() != NNP_BINARY_LE || !t.produces(p, mask, mask_block))
      continue;
    const nnp_view result = *t.views(p)[0];
    if (!contiguous_of(result, NNP_F32, elements) || !is_broadcast_zero(t, *t.views(p)[1], p)) continue;
    // The fused call runs where the where ran: the result it compares must
    // be the one the mask was made of.
    if (t.written_in(p + 1, w, range_of(result))) continue;
    const Range out = range_of(grad_in);
    if (out.overlaps(range_of(result)) || out.overlaps(range_of(grad))) continue;
    // The column sums of grad_in seen as [M, N], made next from it: a
    // reduce of its transpose [N, M] over M.
    int64_t m = 1, n = elements;
    const size_t r = t.next_toucher(w, out);
    nnp_view sums{};
    bool with_sums = false;
    if (r != SIZE_MAX && t.named(r, "reduce") && t.call(r).op() == NNP_REDUCE_SUM && t.views(r).size() == 2) {
      const nnp_view in = *t.views(r)[0], total = *t.views(r)[1];
      with_sums = in.data == grad_in.data && in.dtype == NNP_F32 && in.ndim == 2 && in.shape[1] > 1 &&
                  in.shape[0] * in.shape[1] == elements && in.strides[0] == 1 && in.strides[1] == in.shape[0] &&
                  contiguous_of(total, NNP_F32, in.shape[0]);
      if (with_sums) {
        n = in.shape[0];
        m = in.shape[1];
        sums = as_vector(total, n);
        const Range s = range_of(sums);
        // Written earlier than the reduce wrote it: nothing between may see it.
        with_sums = !t.touched_in(w + 1, r, s) && !s.overlaps(out) && !s.overlaps(range_of(result)) &&
                    !s.overlaps(range_of(grad));
        if (!with_sums) m = 1, n = elements;
      }
    }
    std::unique_ptr<RecordedCall> fused =
        relu_backward_call(t.call(w).context(), as_matrix(result, m, n), as_matrix(grad, m, n),
                           as_matrix(grad_in, m, n), with_sums ? &sums : nullptr);
    if (!fused) continue;
    std::vector<size_t> gone = {p, w};
    if (with_sums) gone.push_back(r);
    t.replace(w, std::move(fused), gone);
    removed += gone.size() - 1;
    w = static_cast<size_t>(-1);  // indices moved: look again from the start
  }
  return removed;
}

// A fill of a private block nothing else reads (the zeros a fused call no
// longer compares with) is dropped.
size_t drop_unread_fills(TapeView& t) {
  std::vector<size_t> gone;
  for (size_t i = 0; i < t.size(); ++i) {
    double value;
    if (!t.call(i).fills_with(value) || t.views(i).size() != 1) continue;
    const Range block = t.private_block(*t.views(i)[0]);
    if (block.lo != nullptr && !t.touched_in(0, t.size(), block, i)) gone.push_back(i);
  }
  t.erase(gone);
  return gone.size();
}

// Private blocks whose lives do not overlap share memory, as the eager
// step's caching allocator hands a freed block to the next tensor: the
// replay's temporaries then stay in cache instead of streaming through
// fresh memory. A block takes over a dead one of at least its size whose
// last use came before its first; it is only moved where its first use
// writes it whole (so nothing reads what another block left there).
void reuse_blocks(TapeView& t) {
  struct Life {
    Range block;
    size_t first = SIZE_MAX, last = 0;
    bool movable = false;
  };
  std::vector<Life> lives;
  for (const Range& b : t.private_blocks()) {
    Life life{b};
    for (size_t i = 0; i < t.size(); ++i)
      if (t.touches(i, b)) {
        if (life.first == SIZE_MAX) life.first = i;
        life.last = i;
      }
    if (life.first == SIZE_MAX) continue;
    const size_t f = life.first;
    const auto& views = t.views(f);
    const size_t first_written = first_written_view(t.call(f).name(), views.size());
    if (first_written != SIZE_MAX) {
      bool read_too = false, whole = false;
      for (size_t k = 0; k < views.size(); ++k) {
        const Range r = range_of(*views[k]);
        if (k < first_written)
          read_too = read_too || r.overlaps(b);
        else if (r.overlaps(b))
          whole = view_is_contiguous(*views[k]) && r.lo == b.lo && r.hi == b.hi;
      }
      life.movable = !read_too && whole;
    }
    lives.push_back(life);
  }
  std::sort(lives.begin(), lives.end(), [](const Life& a, const Life& b) { return a.first < b.first; });
  // The memory each block now lives in, and until when.
  struct Home {
    const char* lo;
    size_t bytes;
    size_t busy_until;
  };
  std::vector<Home> homes;
  for (const Life& life : lives) {
    const size_t bytes = static_cast<size_t>(life.block.hi - life.block.lo);
    Home* best = nullptr;
    if (life.movable)
      for (Home& h : homes)
        if (h.busy_until < life.first && h.bytes >= bytes && (!best || h.bytes < best->bytes)) best = &h;
    if (best == nullptr) {
      homes.push_back({life.block.lo, bytes, life.last});
      continue;
    }
    const ptrdiff_t shift = best->lo - life.block.lo;
    best->busy_until = life.last;
    for (size_t i = life.first; i <= life.last; ++i)
      for (nnp_view* v : t.views(i))
        if (range_of(*v).overlaps(life.block)) v->data = static_cast<char*>(v->data) + shift;
  }
}

}  // namespace

// Private blocks no recorded view reaches any more (their calls removed,
// their values moved into another block) are given back.
void release_unused(Tape& tape, const TapeView& t) {
  std::vector<Range> used;
  for (size_t i = 0; i < t.size(); ++i)
    for (const nnp_view* v : t.views(i)) used.push_back(range_of(*v));
  std::vector<const Storage*> unused;
  for (const Range& b : t.private_blocks()) {
    bool reached = false;
    for (const Range& u : used) reached = reached || u.overlaps(b);
    if (reached) continue;
    for (const Storage* s : tape.allocated)
      if (static_cast<const char*>(s->data) == b.lo) unused.push_back(s);
  }
  auto drop = [&](std::vector<Storage*>& list) {
    for (auto it = list.begin(); it != list.end();) {
      if (std::find(unused.begin(), unused.end(), *it) == unused.end()) {
        ++it;
        continue;
      }
      (*it)->taped.fetch_sub(1, std::memory_order_relaxed);
      release(*it);
      it = list.erase(it);
    }
  };
  drop(tape.viewed);
  drop(tape.allocated);
}

size_t optimize_tape(Tape& tape) {
  TapeView t(tape);
  const size_t removed = elide_copies(t) + fuse_epilogues(t) + fuse_relu_backward(t) + drop_unread_fills(t);
  reuse_blocks(t);  // last: the passes above tell blocks apart by address
  release_unused(tape, t);
  return removed;
}

}  // namespace nnp::core::capture
