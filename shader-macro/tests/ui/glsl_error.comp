#version 450
layout (binding = 0) buffer b { sfpvec4 d[]; };
void main()
{
    afpvec4 v = buffer_ld4(d, 0) * ;
}
