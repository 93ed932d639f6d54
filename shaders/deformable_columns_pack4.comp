// DeformableConv2D's columns from a pack4 input (no unpacking pass before it):
// include/deformable_columns_body.comp.
#version 450

#include "prelude.comp"

#define IN_PACK 4
#include "deformable_columns_body.comp"
