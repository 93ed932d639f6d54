// Unpacks a pack8 blob into pack4: input channel z spreads to output channels 2z and 2z+1. Dispatched over the input.
// Shapes are in elements of each side's own packing (c counts packed channels).
#version 450

#include "prelude.comp"

#define IN_PACK 8
#define OUT_PACK 4
#include "packing_body.comp"
