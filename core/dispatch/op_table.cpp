#include "op_table.hpp"

#include "../error.hpp"

namespace nnp::core::dispatch {

const OpSchema g_op_table[static_cast<int32_t>(OpId::COUNT)] = {
#define NNP_OP_SCHEMA(id, name, backward, form) {name, backward, TraceForm::form},
    NNP_DISPATCHED_OPS(NNP_OP_SCHEMA)
#undef NNP_OP_SCHEMA
};

namespace {

constexpr int32_t index_of(OpId id) { return static_cast<int32_t>(id); }
static_assert(index_of(OpId::ROUND) - index_of(OpId::NEG) + 1 == NNP_UNARY_COUNT, "unary block follows nnp_unary_op");
static_assert(index_of(OpId::GE) - index_of(OpId::ADD) + 1 == NNP_BINARY_COUNT, "binary block follows nnp_binary_op");
static_assert(index_of(OpId::VAR) - index_of(OpId::SUM) + 1 == NNP_REDUCE_COUNT, "reduce block follows nnp_reduce_op");

OpId in_block(OpId first, int32_t op, int32_t count, const char* family) {
  if (op < 0 || op >= count) fail(NNP_INVALID_ARGUMENT, family, ": unknown op ", op);
  return static_cast<OpId>(index_of(first) + op);
}

}  // namespace

OpId unary_id(nnp_unary_op op) { return in_block(OpId::NEG, op, NNP_UNARY_COUNT, "unary"); }
OpId binary_id(nnp_binary_op op) { return in_block(OpId::ADD, op, NNP_BINARY_COUNT, "binary"); }
OpId reduce_id(nnp_reduce_op op) { return in_block(OpId::SUM, op, NNP_REDUCE_COUNT, "reduce"); }

}  // namespace nnp::core::dispatch
