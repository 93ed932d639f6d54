//! Concats appended in place (the net's `append`): a chain of channel concats, each the first
//! input of the next through a Split (Real-ESRGAN's dense blocks), writes each new input past
//! the last concat's channels in one buffer, beside readers of the blobs in between; against
//! the CPU in light mode, where the appends happen, and in heavy mode, where none may.

use super::*;

/// Readers of each concat's other Split top run before the next concat, which then has the
/// buffer alone: cat2 (layer 7) appends into cat1's buffer, which has room for cat1's channels
/// again; the later concats append where the buffer they get has room (the pool may hand out
/// more than asked).
const BEFORE: &str = "7767517
12 14
Input a_in 0 1 a
Input b_in 0 1 b
Input c_in 0 1 c
Input d_in 0 1 d
Concat cat1 2 1 a b k1 0=0
Split s1 1 2 k1 k1a k1b
ReLU r1 1 1 k1a r1 0=0.1
Concat cat2 2 1 k1b c k2 0=0
Split s2 1 2 k2 k2a k2b
Sigmoid g2 1 1 k2a g2
Concat cat3 3 1 k2b d g2 k3 0=0
Concat cat4 2 1 k3 r1 out 0=0
";

/// The ReLU reads cat1's other top after cat2: cat2 must not write into that buffer.
const AFTER: &str = "7767517
12 14
Input a_in 0 1 a
Input b_in 0 1 b
Input c_in 0 1 c
Input d_in 0 1 d
Concat cat1 2 1 a b k1 0=0
Split s1 1 2 k1 k1a k1b
Concat cat2 2 1 k1b c k2 0=0
ReLU r1 1 1 k1a r1 0=0.1
Split s2 1 2 k2 k2a k2b
Sigmoid g2 1 1 k2a g2
Concat cat3 3 1 k2b d g2 k3 0=0
Concat cat4 2 1 k3 r1 out 0=0
";

/// Two concats of cat1's two Split tops: the first (layer 6) must copy, its top's buffer
/// still being the other's; the second (layer 7) has it alone and appends, which would
/// overwrite the first's channels had the first appended too.
const TWO: &str = "7767517
9 10
Input a_in 0 1 a
Input b_in 0 1 b
Input c_in 0 1 c
Input d_in 0 1 d
Concat cat1 2 1 a b k1 0=0
Split s1 1 2 k1 k1a k1b
Concat catx 2 1 k1a c x 0=0
Concat caty 2 1 k1b d y 0=0
Concat cat4 2 1 x y out 0=0
";

#[test]
fn chained_concats_append_in_place_and_match_the_cpu() {
    let mut rng = Rng(117);
    let packed = RunOptions {
        use_packing_layout: true,
        ..RunOptions::fp32()
    };
    let heavy = RunOptions {
        lightmode: false,
        ..packed
    };
    for ctx in gpu_contexts() {
        // channels in blocks of 4 (pack4 on the device) and not (pack1)
        for (chans, [w, h]) in [([8, 4, 4, 8], [16, 12]), ([7, 5, 3, 2], [9, 5])] {
            let inputs: Vec<Input> = ["a", "b", "c", "d"]
                .into_iter()
                .zip(chans)
                .map(|(name, c)| Input::new(&mut rng, name, 3, [w, h, 1, c]))
                .collect();
            // a layer that must append in light mode (into a buffer with room made for it), and
            // one that must not (others may, as the pool's buffers allow)
            let cases = [
                (BEFORE, Some(7), None),
                (AFTER, None, Some(7)),
                (TWO, Some(7), Some(6)),
            ];
            for (param, yes, no) in cases {
                let want = run_net(param, &[], &inputs, "out", RunOptions::fp32(), None)
                    .unwrap()
                    .to_values();
                for (opt, light, eps) in [
                    (packed, true, 1e-6),
                    (RunOptions::default(), true, 1e-2),
                    (heavy, false, 1e-6),
                ] {
                    let what = format!("{chans:?}, {param}{opt:?}, {}", ctx.describe());
                    let (got, record) =
                        run_net_recorded(param, &[], &inputs, "out", opt, Some(ctx.clone()))
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_close(&got.to_values(), &want, eps, &what);
                    let appended = record.appended_layers();
                    match light {
                        true => assert!(
                            yes.is_none_or(|y| appended.contains(&y))
                                && no.is_none_or(|n| !appended.contains(&n)),
                            "{what}: {appended:?}"
                        ),
                        false => assert!(appended.is_empty(), "{what}: {appended:?}"),
                    }
                }
            }
        }
    }
}
