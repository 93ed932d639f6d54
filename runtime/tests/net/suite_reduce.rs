//! ncnn's tests of Pooling (test_pooling.cpp: every pooling type, pad mode and global or
//! adaptive form) through the suite.

use super::suite::*;
use super::*;

/// test_pooling.cpp: every kernel/stride/pad triple over max and average pooling, each pad
/// mode, global and adaptive pooling.
#[test]
fn ncnn_pooling_tests() {
    let mut rng = Rng(401);
    let mut cases = Vec::new();
    // (channels, pad mode, count include pad) per pooling type
    let max_sets = [
        (1, 0, 0),
        (2, 1, 0),
        (3, 2, 0),
        (4, 3, 0),
        (7, 0, 0),
        (8, 1, 0),
        (15, 2, 0),
        (16, 3, 0),
    ];
    let avg_sets = [
        (1, 0, 0),
        (2, 1, 0),
        (3, 0, 1),
        (4, 1, 0),
        (7, 0, 0),
        (8, 1, 1),
        (12, 2, 1),
        (15, 0, 0),
        (16, 1, 0),
        (64, 3, 1),
    ];
    for (kind, sets) in [(0, &max_sets[..]), (1, &avg_sets[..])] {
        let mut group = Vec::new();
        for (k, s, p) in super::suite_pooling_nd::KSP {
            for (c, mode, include) in sets {
                let params = format!("0={kind} 1={k} 2={s} 3={p} 5={mode} 6={include}");
                group.push(unary_case(
                    &mut rng,
                    "Pooling",
                    &params,
                    &[9, 7, *c],
                    RANDOM,
                ));
            }
        }
        cases.extend(sample(group, 12));
    }
    // global pooling, and its reduced-size windows
    let mut group = Vec::new();
    for (w, h, c, kind) in [
        (2, 5, 1, 0),
        (5, 2, 1, 1),
        (3, 6, 3, 0),
        (6, 3, 3, 1),
        (4, 4, 4, 0),
        (6, 4, 4, 1),
        (8, 7, 8, 0),
        (7, 8, 8, 1),
        (11, 13, 16, 0),
        (13, 11, 16, 1),
        (110, 103, 106, 0),
        (130, 101, 106, 1),
        (80, 93, 128, 0),
        (80, 91, 128, 1),
    ] {
        let params = format!("0={kind} 1=1 2=1 4=1");
        group.push(unary_case(&mut rng, "Pooling", &params, &[w, h, c], RANDOM));
    }
    group.push(unary_case(
        &mut rng,
        "Pooling",
        "0=0 1=2 2=2",
        &[48, 48, 4],
        RANDOM,
    ));
    group.push(unary_case(
        &mut rng,
        "Pooling",
        "0=0 1=2 2=2 3=1",
        &[48, 48, 15],
        RANDOM,
    ));
    cases.extend(sample(group, 6));
    // adaptive pooling to every output size up to past the input's
    for kind in [1, 0] {
        let mut group = Vec::new();
        for (w, h, c) in [
            (2, 5, 1),
            (5, 2, 1),
            (3, 6, 3),
            (4, 4, 4),
            (6, 4, 4),
            (8, 7, 8),
        ] {
            for out in 1..=w.max(h) + 1 {
                let params = format!("0={kind} 1=1 2=1 7=1 8={out}");
                group.push(unary_case(&mut rng, "Pooling", &params, &[w, h, c], RANDOM));
            }
        }
        cases.extend(sample(group, 8));
    }
    // average pooling counting the pad, output sizes ignored without adaptive pooling
    let mut group = Vec::new();
    for (w, h, out) in [(11, 13, 1), (11, 13, 7), (13, 11, 2), (13, 11, 12)] {
        let params = format!("0=0 1=1 2=1 6=1 8={out}");
        group.push(unary_case(
            &mut rng,
            "Pooling",
            &params,
            &[w, h, 16],
            RANDOM,
        ));
    }
    cases.extend(sample(group, 2));
    check_suite(cases, false);
}
