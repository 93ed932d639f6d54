// Unpacks a pack4 blob into pack1: input channel z spreads to output channels 4z .. 4z+3. Dispatched over the input.
// Shapes are in elements of each side's own packing (c counts packed channels).
#version 450

#include "prelude.comp"

#define IN_PACK 4
#define OUT_PACK 1
#include "packing_body.comp"
