// Binary operation with broadcast on pack4 blobs, ops 0 to 11; the body is include/binaryop_body.comp.
#version 450

#include "prelude.comp"

#define PACK 4
#include "binaryop_body.comp"
