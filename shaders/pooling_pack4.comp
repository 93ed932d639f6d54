// 2-D pooling (max/average, global, adaptive, ncnn's pads) on a pack4 buffer blob; the
// body is include/pooling_body.comp.
#version 450

#include "prelude.comp"

#define PACK 4
#include "pooling_body.comp"
