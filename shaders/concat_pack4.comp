// Concat: two inputs (or one, given twice) copied into their places in the output, pack4 buffer blobs; the body is
// include/concat_body.comp.
#version 450

#include "prelude.comp"

#define PACK 4
#include "concat_body.comp"
