// The normalizations (LayerNorm, RMSNorm, GroupNorm, InstanceNorm, MVN, Normalize) over
// groups that are contiguous runs of whole vec4s of a pack1 buffer blob whose channels lie back
// to back (logical index is physical): group g's value j at walk(g) + j, walk(g) from the
// outer sizes and strides a multiple of 4. The host picks this shader only where that holds;
// reduce.comp takes the rest.
//
// A tile is TILE values of a group, held in registers by one workgroup (4 * K per lane). Statistics are a
// mean and the sum of squared deviations from it (two passes over the registers, as the CPU's
// two passes over memory), in fp32 whatever the storage. Norms that do not center (RMS, L2)
// take the mean as 0, so the sum is of squares. The specialization constant `mode`:
// - 0: a group is one tile: statistics, then every value normalized, reading memory once.
// - 1: tile s of group g writes its mean and squared-deviation sum to partials[g * segs + s].
// - 2: one workgroup per group combines its segs partials (Chan's parallel variance) into
//   the scale a and offset b, written at partials[groups * segs + g].
// - 3: tile s of group g: every value x becomes x * a + b, then gamma and beta.
// `norm` and `affine` are reduce.comp's.
#version 450

#extension GL_EXT_control_flow_attributes: require

#include "prelude.comp"

#include "normalize_vec4_body.comp"
