// Binary operation with broadcast on pack1 blobs, ops 0 to 18 on afp (BINARY_OP_SCALAR); the body is include/binaryop_body.comp.
#version 450

#include "prelude.comp"

#define PACK 1
#include "binaryop_body.comp"
