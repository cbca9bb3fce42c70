//===- RegionFormer.h - The state of kb-form-regions ------------*- C++ -*-===//
//
// Private to lib/Transforms: the grouping kb-form-regions runs over one
// block (FormRegions.cpp: visiting ops into groups, materialising regions;
// RegionMoves.cpp: the moves after grouping, epilogues into row
// reductions and pointwise ops into their consumers' groups).
//
//===----------------------------------------------------------------------===//
#ifndef KB_LIB_TRANSFORMS_REGIONFORMER_H
#define KB_LIB_TRANSFORMS_REGIONFORMER_H

#include "RegionRows.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace kb::formregions {

using llvm::DenseMap;
using mlir::Block;
using mlir::OpBuilder;
using mlir::StringAttr;
using mlir::Type;

class RegionFormer {
public:
  RegionFormer(Block &block, unsigned maxOps, bool normsBeforeTF32,
               bool reductionsBeforeSteps, int &nextId)
      : block(block), maxOps(maxOps), normsBeforeTF32(normsBeforeTF32),
        reductionsBeforeSteps(reductionsBeforeSteps), nextId(nextId) {}

  void run() {
    for (Operation &op : block.without_terminator())
      visit(&op);
    moveEpiloguesIntoReductions();
    sinkIntoConsumers();
    materialize();
  }

private:
  /// The int64 result of a reduction (argmax / argmin indices): kernels
  /// write it, but only float values flow between a region's ops, so its
  /// consumers do not join the reduction's group.
  static bool isIndexResult(Value v);

  bool isCandidate(Operation *op, OpKind kind);

  /// Kernels read float32 and bool operands (a bool mask computed in ATen
  /// or passed in: T5's and CLIP's attention masks, read as 0 or 1) and
  /// compute bools inside a region (a comparison feeding where): an op over
  /// integer tensors (token ids, positions, class indices) would make its
  /// whole region fail code generation, taking the float ops it joined down
  /// with it (LLaMA's mask arithmetic: six regions not generated). Such ops
  /// stay in ATen; argmax / argmin still write their int64 indices.
  bool readsOrMakesNonKernelValue(Operation *op, OpKind kind);

  /// Dependencies of `op` on groups, through any path.
  void computeDeps(Operation *op);

  void visit(Operation *op);

  /// The ops joinView added to groups.
  llvm::SmallPtrSet<Operation *, 16> mapped;

  /// An index-map op (indexMapOf: a view, permute, roll, slice, select or
  /// constant pad) of a value the current stage of a group without a
  /// reduction computes joins that group, whose stage goes on in the op's
  /// shape: later members read the op's input at the index the map gives
  /// (RegionEmitter::valueAt). Swin's shifted windows add their mask to
  /// the scores viewed as [B, nW, heads, N, N] between two views of
  /// [B * nW, heads, N, N] (the bias add, the mask add and the softmax
  /// were three kernels); its window reverse (view, permute, reshape,
  /// roll, crop) copies the projection's output three times before the
  /// residual add reads it.
  bool joinView(Operation *op);

  /// Index-map ops joinView took that no later member reads leave their
  /// groups again (at a region's end one would only write its input
  /// again, moved).
  void dropTrailingViews();

  /// `cat` of 2-8 static float32 tensors of one rank along a constant dim,
  /// whose list nothing else reads: a kernel evaluates the input its index
  /// falls in (GPT-NeoX's and LLaMA's rotate_half, `cat(-x2, x1)`, inside
  /// `q * cos + rotate_half(q) * sin`). Its list, or null.
  ListOp fusableCat(Operation *op);

  /// The cat and its list open an anchorless group over the cat's shape,
  /// which its pointwise consumers join. A pointwise group computing a
  /// listed tensor and used by nothing else comes along: evaluated at the
  /// index the cat maps to it, its result is never written.
  void openCatGroup(Operation *cat, ListOp list);

  /// A reduction that changes the shape cannot join a group whose values
  /// are also used outside it (the region would write outputs of two
  /// shapes), and would read its input from memory. When that group is a
  /// short pointwise chain over at most two full-size tensors whose other
  /// users are pointwise ops (`v = x * tanh(softplus(x)); v - v.mean(0)`,
  /// a squeeze-excitation's `y * sigmoid(fc(y.mean((2, 3))))`), the
  /// reduction gets its own copy of the chain instead, computed from the
  /// chain's inputs: `v` is then written by no one (its other users join the
  /// original chain, which no longer reaches the reduction), and every op
  /// rounds as before.
  bool recomputeProducers(Operation *op);

  /// Left out by a numerics rule (rewrite's reports list these: the op
  /// could be fused, and is not, on purpose).
  void keptForNumerics(Operation *op, const char *reason);

  bool tryJoin(Operation *op, OpKind kind, Group &g);

  /// `op` (of shape `shape`) combines the keepdim result of `g`'s only
  /// reduction, a plain one over adjacent dims, with values of the rows it
  /// reduced: the row kernel evaluates it per element after the row's
  /// result. Nothing else may read the reduced stage's values, which the
  /// kernel then never writes (a region writes outputs of one shape). After
  /// a pooling the last reduction's rows are pooled values: no row kernel
  /// holds the pooling's input.
  bool broadcastsBack(Operation *op, ArrayRef<int64_t> shape, Group &g);

  bool dependsOn(Operation *op, int gid);

  /// `op` just joined `g`; its other operands' anchorless pointwise groups
  /// over the same shape (`where(x < t, x, -x)`: the mask and the negation
  /// start groups of their own when their producer stays outside, e.g. a
  /// norm kept in ATen) join `g` too, when neither group reaches the other
  /// and `op` reaches them only directly. With `leavesOnly` (`op` opened
  /// `g`), only smaller broadcast leaves do (broadcastLeaf).
  void absorbSiblings(Operation *op, Group &g, bool leavesOnly = false);

  /// A smaller group `s` whose values `op` broadcasts into `g` joins `g`
  /// too when it is a leaf (it reads only values from outside every group:
  /// parameters, inputs, constants) used by nothing else: `where(p > 0, y,
  /// q)` with a per-channel mask of a parameter (gen task 79 left the mask
  /// in a region of its own, whose bool output no kernel writes, and so
  /// the `where` region had a bool input and no kernel either). The kernel
  /// evaluates its ops at the broadcast index, as it reads a broadcast
  /// input.
  bool broadcastLeaf(const Group &s, const Group &g, Operation *op);

  /// An anchor's pointwise epilogue whose value is also used by a later
  /// region and reduced by a row reduction in a group of its own (T5's and
  /// LLaMA's `h = x + o_proj(a)`, then `h * rsqrt(h.pow(2).mean(-1) +
  /// eps)`, h read again by the next residual add) moves into the
  /// reduction's group: that kernel computes h from the anchor's result,
  /// writes it for the later users, and reduces it, where the epilogue
  /// wrote h and h^2 and the row kernel read both back (7 element passes
  /// become 4). The anchor then runs alone. The reduction could not join
  /// the anchor's group (it changes the shape while h is used outside).
  void moveEpiloguesIntoReductions();

  /// The anchorless group whose first op is a last-dim row reduction of an
  /// epilogue value, every other epilogue user in it over the epilogue's
  /// shape, whose values used outside it all have that shape, and that no
  /// other user of the epilogue reaches (they read its values from that
  /// group after the move); or -1.
  int epilogueTarget(const Group &g, ArrayRef<Operation *> epilogue,
                     const llvm::SmallPtrSetImpl<Operation *> &inEpilogue);

  /// A reduction over the input's last dim only (keepdim or not): its
  /// dim list names that dim, and its result is the input's shape without
  /// it or with it 1 (a layer norm's normalized_shape is no dim list).
  static bool reducesLastDim(Operation *red);

  /// Whether any path from the ops `from` reaches group `target`, a group
  /// counted as one unit (its results depend on all its inputs) and the
  /// ops of `moving` as members of `target`.
  bool reachesGroup(ArrayRef<Operation *> from, int target,
                    const llvm::SmallPtrSetImpl<Operation *> &moving);

  /// A pointwise op of a group whose operands are all in memory anyway
  /// (inputs, parameters, the group's anchor's result, other units'
  /// results) and whose users all belong to other groups moves into them:
  /// each consumer's kernel evaluates it from the same operand bytes, and
  /// its result is never written. gen-20261207 task 13's `v1.clamp(-1, 1)`
  /// of a convolution's output joined the convolution's epilogue, which
  /// wrote 205 MB that the next kernel read back. With users in several
  /// groups, each gets a copy: a convolution's bias add read by both
  /// `v.mean(0)` and `v - mean` (gen-20261306 task 1) was a pass of its
  /// own, 1 GB moved for an add (0.34 ms of 2.2 on an H100); the copies
  /// round as the op does, and each reads the operand its result replaced.
  void sinkIntoConsumers();

  /// The groups `op` (a member of `g`) can move into, none if it stays.
  /// Copies into more than a few would read its operands that many times.
  SmallVector<int, 4> sinkTargets(Operation *op, const Group &g);

  /// Whether rewrite's numerics policy may keep `g`'s ATen ops: a reduction
  /// whose result reaches a TF32 convolution (a squeeze-excitation's mean
  /// before its 1x1 convolutions). An op moved or copied into it would
  /// then run in ATen too: EfficientNet-B0's SiLU, copied into its 16
  /// excitation means, was computed twice (154 MB of memory-bound traffic
  /// where 136 were).
  bool mayStayInAten(const Group &g);

  /// A static tensor of more than an eighth of `n` elements: moving a read
  /// of it into another kernel costs about as much as the value it feeds.
  static bool isFullSize(Value v, int64_t n);

  /// Kahn's algorithm over units (a group or a lone op), preferring original
  /// order, then rebuilds the block in that order with kb.region ops.
  void materialize();

  void buildRegion(OpBuilder &b, Group &g, ArrayRef<Operation *> ops,
                   Operation *terminator);

  void annotateUnfused();

  Block &block;
  unsigned maxOps;
  bool normsBeforeTF32;
  bool reductionsBeforeSteps;
  int &nextId;
  std::vector<Group> groups;
  DenseMap<Operation *, int> groupOf;
  DenseMap<Operation *, llvm::BitVector> deps;
  SmallVector<std::pair<Operation *, std::string>> unfused;
};

} // namespace kb::formregions

#endif // KB_LIB_TRANSFORMS_REGIONFORMER_H
