// What innerproduct and innerproduct_int8_body share: one workgroup of LANES invocations per
// output over a flat input of vec4s, the layer's bias and activation constants, its shape
// constants (from shape_constant_id_offset: 4 unless the shader takes constants of its own
// first), and the bindings but the weights' (binding 2, each its own type).

#include "prelude.comp"

#include "vulkan_activation.comp"

layout (constant_id = 0) const int bias_term = 0;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;

#ifndef shape_constant_id_offset
#define shape_constant_id_offset 4
#endif
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int outw = 0;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };

layout (push_constant) uniform parameter
{
    int w, outw;
} p;

#define LANES 64
layout (local_size_x = LANES) in;

// the output of this workgroup: past 65535 outputs (the workgroups a grid dimension may have)
// the grid goes on along z
int workgroup_output()
{
    return int(gl_WorkGroupID.y + gl_WorkGroupID.z * gl_NumWorkGroups.y);
}
