// Shared helper for the test shaders.
afpvec4 scale_by(afpvec4 v, float s)
{
    return v * afp(s);
}
