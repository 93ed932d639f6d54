// DeformableConv2D's columns from a pack1 input: include/deformable_columns_body.comp.
#version 450

#include "prelude.comp"

#define IN_PACK 1
#include "deformable_columns_body.comp"
