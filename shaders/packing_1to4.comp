// Repacks a pack1 blob into pack4: output channel z holds input channels 4z .. 4z+3.
// Shapes are in elements of each side's own packing (c counts packed channels). Buffer blobs
// of channels not a multiple of 4 get zero lanes past the last (the convolution GEMM reads an
// RGB image as one block).
#version 450

#include "prelude.comp"

#define IN_PACK 1
#define OUT_PACK 4
#include "packing_body.comp"
