// Interp on pack1 blobs; the body is include/interp_body.comp.
#version 450

#include "prelude.comp"

#define PACK 1
#include "interp_body.comp"
