// Where a transposed convolution's full (bordered) result at coordinate f, along one axis, reads
// from through kernel tap k: the input position i with f = i · stride + k · dilation, or -1 where
// no input lies there (between strides, or outside the input's n positions).
int deconvolution_source(int f, int k, int dilation, int stride, int n)
{
    const int t = f - k * dilation;
    if (t < 0 || t % stride != 0)
        return -1;
    const int i = t / stride;
    return i < n ? i : -1;
}
