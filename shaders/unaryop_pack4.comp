// The activation layers' functions elementwise on a pack4 blob; the body is
// include/unaryop_body.comp.
#version 450

#include "prelude.comp"

#define PACK 4
#include "unaryop_body.comp"
