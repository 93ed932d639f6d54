// The activation layers' functions elementwise on a pack8 blob; the body is
// include/unaryop_body.comp.
#version 450

#include "prelude.comp"

#define PACK 8
#include "unaryop_body.comp"
