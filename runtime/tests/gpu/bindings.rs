//! Bindings with gaps and exact integer arithmetic on both paths.

use super::*;

pub(crate) static GAPPED: &ShaderModule = shader!(
    src: "#version 450
layout (binding = 0) readonly buffer a { float a_data[]; };
layout (binding = 3) writeonly buffer b { float b_data[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i < p.n)
        b_data[i] = a_data[i] * 2.0 + 1.0;
}
"
);

#[test]
fn binding_gaps_bind_the_right_buffers() {
    for ctx in contexts() {
        let pipeline = ctx
            .pipeline(GAPPED, OptionSet::FP32, &Specialization::default())
            .unwrap();
        let n = 100u32;
        let input = random(n as usize, 5);
        let a = ctx.upload(&StorageFormat::Fp32.encode(&input)).unwrap();
        let b = ctx.storage_buffer(u64::from(n) * 4).unwrap();
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &[n], [n, 1, 1]).unwrap();
        rec.submit_and_wait().unwrap();
        let got = StorageFormat::Fp32.decode(&ctx.download(&b).unwrap(), n as usize);
        let want: Vec<f32> = input.iter().map(|x| x * 2.0 + 1.0).collect();
        assert_close(
            &got,
            &want,
            0.001,
            &format!("gapped bindings on {}", ctx.describe()),
        );
    }
}

pub(crate) static REMAINDER: &ShaderModule = shader!(
    src: "#version 450
layout (binding = 0) readonly buffer a { ivec2 a_data[]; };
layout (binding = 1) writeonly buffer b { ivec2 b_data[]; };
layout (push_constant) uniform parameter { int n; } p;
void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i < p.n)
    {
        const int x = a_data[i].x;
        const int y = a_data[i].y;
        b_data[i] = ivec2(x % y, (x % y + y) % y);
    }
}
"
);

/// GLSL's `%` on signed integers (SPIR-V `OpSMod`) is exact on both paths: naga's reader makes it
/// float arithmetic (wrong past 2^24 everywhere, and at exact multiples on the NVIDIA driver),
/// so the naga path rewrites it in integers first.
#[test]
fn signed_remainder_is_exact_on_both_paths() {
    // GLSL leaves `%` of negative operands undefined (lavapipe truncates where SPIR-V floors)
    let mut pairs: Vec<[i32; 2]> = vec![[6, 3], [33_554_431, 2], [100_000_007, 3]];
    for x in (0..4000).step_by(7) {
        for y in [1, 2, 3, 5, 7, 33, 495] {
            pairs.push([x, y]);
            pairs.push([x * 9973 + 16_777_216, y]);
        }
    }
    let n = pairs.len() as u32;
    let words: Vec<u32> = pairs.iter().flatten().map(|v| *v as u32).collect();
    let want: Vec<i32> = pairs.iter().flat_map(|&[x, y]| [x % y; 2]).collect();
    for ctx in contexts() {
        let pipeline = ctx
            .pipeline(REMAINDER, OptionSet::FP32, &Specialization::default())
            .unwrap();
        let a = ctx.upload(bytemuck::cast_slice(&words)).unwrap();
        let b = ctx.storage_buffer(u64::from(n) * 8).unwrap();
        let mut rec = ctx.recorder();
        rec.dispatch(&pipeline, &[&a, &b], &[n], [n, 1, 1]).unwrap();
        rec.submit_and_wait().unwrap();
        let bytes = ctx.download(&b).unwrap();
        let got: &[i32] = bytemuck::cast_slice(&bytes);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let [x, y] = pairs[k / 2];
            assert_eq!(g, w, "{x} % {y} (form {}) on {}", k % 2, ctx.describe());
        }
    }
}
