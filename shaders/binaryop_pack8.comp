// Binary operation with broadcast on pack8 blobs (16-byte accesses with fp16 storage), ops 0 to 11; the body is include/binaryop_body.comp.
#version 450

#include "prelude.comp"

#define PACK 8
#include "binaryop_body.comp"
