// Copies a box of a pack4 buffer blob (Crop, Slice); the body is include/copy_box_body.comp.
#version 450

#include "prelude.comp"

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

#define COPY(dst, src) buffer_cp4(top_blob_data, dst, bottom_blob_data, src)
#include "copy_box_body.comp"
