// Concat: two inputs (or one, given twice) copied into their places in the output, pack1 buffer blobs; the body is
// include/concat_body.comp.
#version 450

#include "prelude.comp"

#define PACK 1
#include "concat_body.comp"
