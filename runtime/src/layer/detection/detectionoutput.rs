//! DetectionOutput: `0=num_class 1=nms_threshold 2=nms_top_k 3=keep_top_k
//! 4=confidence_threshold 5-8=variances`. SSD's head: the box offsets (first input, 4 per
//! prior) decoded against the priors (third input: PriorBox's corners, then its variances
//! row) in center-size form; per class but the background (class 0), the priors whose score
//! (second input, `num_prior × num_class`) passes the threshold, sorted, cut to `nms_top_k`
//! and suppressed at `nms_threshold`; all classes' survivors sorted again and cut to
//! `keep_top_k`: rows of `[label, score, xmin, ymin, xmax, ymax]`. With `num_class -233`,
//! MXNet's `MultiBoxDetection`: scores `num_class × num_prior`, priors one per row, the
//! params' variances. No detection leaves an empty output, as in ncnn. On the CPU, as ncnn's.

use std::borrow::Cow;

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::boxes::{Overlap, Scored, detections, sort_descending, suppress};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// SSD's box decoding and per-class suppression.
#[derive(Default)]
pub struct DetectionOutput {
    num_class: i32,
    nms_threshold: f32,
    nms_top_k: usize,
    keep_top_k: usize,
    confidence_threshold: f32,
    variances: [f32; 4],
}

/// The inputs' values (borrowed where the mats hold them as read) with the counts they must
/// agree on.
struct Inputs<'a> {
    location: Cow<'a, [f32]>,
    confidence: Cow<'a, [f32]>,
    /// PriorBox's rows: 4 corners per prior, then (SSD) a row of 4 variances per prior from
    /// value `variances_at`.
    priors: Cow<'a, [f32]>,
    variances_at: Option<usize>,
    num_prior: usize,
    num_class: usize,
    mxnet: bool,
}

/// A prior's decoded box for a class whose score passed the threshold.
#[derive(Clone, Copy)]
struct Candidate {
    corners: [f32; 4],
    class: usize,
    score: f32,
}

/// Priors scanned per task: a few thousand scores each, so that a small head does not pay
/// for the threads.
const PRIORS_PER_TASK: usize = 1024;

impl DetectionOutput {
    fn inputs<'a>(&self, bottoms: &'a [Mat]) -> Result<Inputs<'a>> {
        let [location, confidence, priorbox] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "3: box offsets, class scores and prior boxes",
            }
            .into());
        };
        let mxnet = self.num_class == -233;
        let [pw, ph, ..] = priorbox.shape();
        let (num_prior, num_class, variances_at) = if mxnet {
            (ph, confidence.shape()[1], None)
        } else {
            (pw / 4, self.num_class.max(0) as usize, Some(pw))
        };
        let inputs = Inputs {
            location: location.values(),
            confidence: confidence.values(),
            priors: priorbox.values(),
            variances_at,
            num_prior,
            num_class,
            mxnet,
        };
        let check = |what: &'static str, got: usize, expected: usize| {
            if got < expected {
                return Err(InputError::Values {
                    what,
                    got,
                    expected,
                });
            }
            Ok(())
        };
        // 4 per prior, read in order as ncnn reads them (MXNet's rows of fewer than 4 do not
        // hold them)
        check(
            "prior box values (4 per prior)",
            inputs.priors.len(),
            num_prior * 4,
        )?;
        check(
            "box offsets (4 per prior)",
            inputs.location.len(),
            num_prior * 4,
        )?;
        check(
            "class scores",
            inputs.confidence.len(),
            num_prior * num_class,
        )?;
        if !mxnet {
            let got = if ph >= 2 {
                inputs.priors.len().saturating_sub(pw)
            } else {
                0
            };
            check(
                "prior variances (PriorBox's second row)",
                got,
                num_prior * 4,
            )?;
        }
        Ok(inputs)
    }

    /// The candidates of priors `range` in prior order, classes in order within a prior: each
    /// class but the background whose score passes the threshold, with the prior's box
    /// decoded once. A prior whose background score passes 1 - threshold has no class score
    /// above the threshold once scores are a softmax: ncnn decodes only the others, and the
    /// rest are left out here (their boxes are ncnn's uninitialized memory; they take no part
    /// where scores are a softmax).
    fn candidates(&self, inputs: &Inputs<'_>, range: std::ops::Range<usize>) -> Vec<Candidate> {
        let background = 1.0 - self.confidence_threshold;
        let mut out = Vec::new();
        for prior in range {
            if inputs.score(prior, 0) >= background {
                continue;
            }
            let first = out.len();
            for class in 1..inputs.num_class {
                let score = inputs.score(prior, class);
                if score > self.confidence_threshold {
                    out.push(Candidate {
                        corners: [0.0; 4],
                        class,
                        score,
                    });
                }
            }
            if out.len() > first {
                let corners = inputs.decode(prior, &self.variances);
                out[first..].iter_mut().for_each(|c| c.corners = corners);
            }
        }
        out
    }
}

impl Inputs<'_> {
    /// Prior `i`'s score for class `c`.
    fn score(&self, i: usize, c: usize) -> f32 {
        if self.mxnet {
            self.confidence[c * self.num_prior + i]
        } else {
            self.confidence[i * self.num_class + c]
        }
    }

    /// Prior `i`'s decoded corners (center-size offsets scaled by the variances).
    fn decode(&self, i: usize, params: &[f32; 4]) -> [f32; 4] {
        let loc = &self.location[i * 4..i * 4 + 4];
        let pb = &self.priors[i * 4..i * 4 + 4];
        let var = match self.variances_at {
            Some(at) => {
                let v = &self.priors[at + i * 4..at + i * 4 + 4];
                [v[0], v[1], v[2], v[3]]
            }
            None => *params,
        };
        let (pw, ph) = (pb[2] - pb[0], pb[3] - pb[1]);
        let (pcx, pcy) = ((pb[0] + pb[2]) * 0.5, (pb[1] + pb[3]) * 0.5);
        let cx = var[0] * loc[0] * pw + pcx;
        let cy = var[1] * loc[1] * ph + pcy;
        let w = (var[2] * loc[2]).exp() * pw;
        let h = (var[3] * loc[3]).exp() * ph;
        [cx - w * 0.5, cy - h * 0.5, cx + w * 0.5, cy + h * 0.5]
    }
}

impl Layer for DetectionOutput {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.num_class = pd.int(0, 0);
        self.nms_threshold = pd.float(1, 0.05);
        self.nms_top_k = pd.int(2, 300).max(0) as usize;
        self.keep_top_k = pd.int(3, 100).max(0) as usize;
        self.confidence_threshold = pd.float(4, 0.5);
        self.variances = [
            pd.float(5, 0.1),
            pd.float(6, 0.1),
            pd.float(7, 0.2),
            pd.float(8, 0.2),
        ];
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let inputs = self.inputs(bottoms)?;
        // one pass over the scores in memory order (a class after another strode over all of
        // them once per class), in tasks whose lists join in prior order: each class's
        // candidates come in prior order, the order ncnn sorts them from
        let tasks: Vec<std::ops::Range<usize>> = (0..inputs.num_prior)
            .step_by(PRIORS_PER_TASK)
            .map(|start| start..(start + PRIORS_PER_TASK).min(inputs.num_prior))
            .collect();
        let found: Vec<Vec<Candidate>> = tasks
            .into_par_iter()
            .map(|range| self.candidates(&inputs, range))
            .collect();
        let mut per_class: Vec<Vec<Candidate>> = vec![Vec::new(); inputs.num_class];
        for c in found.into_iter().flatten() {
            per_class[c.class].push(c);
        }
        let kept: Vec<Vec<Scored>> = per_class
            .into_par_iter()
            .map(|candidates| {
                let mut boxes: Vec<Scored> = (candidates.iter())
                    .map(|c| Scored::new(c.corners, c.class, c.score))
                    .collect();
                sort_descending(&mut boxes);
                boxes.truncate(self.nms_top_k);
                let kept = suppress(&boxes, self.nms_threshold, Overlap::Ratio);
                kept.into_iter().map(|k| boxes[k]).collect()
            })
            .collect();
        let mut all: Vec<Scored> = kept.into_iter().flatten().collect();
        sort_descending(&mut all);
        all.truncate(self.keep_top_k);
        if all.is_empty() {
            return Ok(vec![Mat::from_numpy(&[0], &[])?]);
        }
        Ok(vec![detections(&all, 0.0)?])
    }
}
