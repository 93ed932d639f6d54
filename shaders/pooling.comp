// 2-D pooling (max/average, global, adaptive, ncnn's pads) on a pack1 buffer blob; the
// body is include/pooling_body.comp.
#version 450

#include "prelude.comp"

#define PACK 1
#include "pooling_body.comp"
