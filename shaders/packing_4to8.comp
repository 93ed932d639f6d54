// Repacks a pack4 blob into pack8: output channel z holds input channels 2z and 2z+1.
// Shapes are in elements of each side's own packing (c counts packed channels).
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 8
#include "packing_body.comp"
