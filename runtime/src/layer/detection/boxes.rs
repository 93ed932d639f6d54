//! What the detection heads share: a scored box, ncnn's descending sort of boxes by score (its
//! order of ties included, so that the same detections come out in the same order), the
//! greedy non-maximum suppression, and the `6 × n` detections blob.

use crate::error::Result;
use crate::tensor::Mat;

/// A candidate detection: its corners, class label and score, and its area as suppression
/// takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scored {
    pub xmin: f32,
    pub ymin: f32,
    pub xmax: f32,
    pub ymax: f32,
    pub label: i32,
    pub score: f32,
    pub area: f32,
}

impl Scored {
    /// A box of corners `[xmin, ymin, xmax, ymax]`, its area from them.
    pub(crate) fn new([xmin, ymin, xmax, ymax]: [f32; 4], label: usize, score: f32) -> Scored {
        Scored {
            xmin,
            ymin,
            xmax,
            ymax,
            label: label as i32,
            score,
            area: (xmax - xmin) * (ymax - ymin),
        }
    }

    /// A box of center `(cx, cy)` and size `w × h`; its area `w · h` (Yolov3DetectionOutput's).
    pub(crate) fn centered([cx, cy, w, h]: [f32; 4], label: usize, score: f32) -> Scored {
        let corners = [cx - w * 0.5, cy - h * 0.5, cx + w * 0.5, cy + h * 0.5];
        Scored {
            area: w * h,
            ..Scored::new(corners, label, score)
        }
    }
}

/// Sorts `boxes` by descending score as ncnn's detection layers do: a quicksort partitioning
/// around the middle element (Hoare's scheme), whose order of equal scores is part of what the
/// layers output. Ranges are kept on a stack of their own: no recursion to run out of.
pub(crate) fn sort_descending(boxes: &mut [Scored]) {
    if boxes.len() < 2 {
        return;
    }
    let mut ranges = vec![(0usize, boxes.len() - 1)];
    while let Some((left, right)) = ranges.pop() {
        let pivot = boxes[(left + right) / 2].score;
        let (mut i, mut j) = (left as isize, right as isize);
        while i <= j {
            while boxes[i as usize].score > pivot {
                i += 1;
            }
            while boxes[j as usize].score < pivot {
                j -= 1;
            }
            if i <= j {
                boxes.swap(i as usize, j as usize);
                i += 1;
                j -= 1;
            }
        }
        if (left as isize) < j {
            ranges.push((left, j as usize));
        }
        if i < right as isize {
            ranges.push((i as usize, right));
        }
    }
}

/// How a box overlaps one already kept too much: ncnn's two spellings of IoU above the
/// threshold, which differ where it is met exactly or the union is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    /// `intersection / union > threshold` (DetectionOutput, YoloDetectionOutput, Proposal).
    Ratio,
    /// `intersection > threshold · union` (Yolov3DetectionOutput).
    Scaled,
}

/// The indices of `boxes` (sorted by descending score) that greedy non-maximum suppression
/// keeps: each box unless it overlaps a kept one beyond `threshold`. The kept boxes lie in
/// arrays of their own, each candidate tested against all of them without a branch per pair
/// (vectorized) and a chunk at a time: a YOLO head's thousands of candidates, most of them
/// kept, meet every kept box before them.
pub(crate) fn suppress(boxes: &[Scored], threshold: f32, overlap: Overlap) -> Vec<usize> {
    /// Kept boxes tested at once before an early exit: a few vectors' worth (most candidates
    /// a kept box suppresses meet it among the first).
    const CHUNK: usize = 16;
    let mut kept: Vec<usize> = Vec::new();
    let mut k = Kept::default();
    for (i, a) in boxes.iter().enumerate() {
        let beyond = (0..k.len()).step_by(CHUNK).any(|start| {
            let end = (start + CHUNK).min(k.len());
            k.overlaps(a, start..end, threshold, overlap)
        });
        if !beyond {
            kept.push(i);
            k.push(a);
        }
    }
    kept
}

/// The kept boxes as arrays, one per field.
#[derive(Default)]
struct Kept {
    xmin: Vec<f32>,
    ymin: Vec<f32>,
    xmax: Vec<f32>,
    ymax: Vec<f32>,
    area: Vec<f32>,
}

impl Kept {
    fn len(&self) -> usize {
        self.area.len()
    }

    fn push(&mut self, b: &Scored) {
        self.xmin.push(b.xmin);
        self.ymin.push(b.ymin);
        self.xmax.push(b.xmax);
        self.ymax.push(b.ymax);
        self.area.push(b.area);
    }

    /// Whether `a` overlaps any kept box of `range` beyond `threshold`: the intersection (0
    /// where they do not meet) and the union of the areas, every pair evaluated: the tests
    /// combine with `|`, not `||`, and the slices are walked together, so that the loop has no
    /// branch and vectorizes.
    fn overlaps(
        &self,
        a: &Scored,
        range: std::ops::Range<usize>,
        threshold: f32,
        overlap: Overlap,
    ) -> bool {
        let r = range;
        let kept = (self.xmin[r.clone()].iter().zip(&self.ymin[r.clone()]))
            .zip(self.xmax[r.clone()].iter().zip(&self.ymax[r.clone()]))
            .zip(&self.area[r]);
        let mut any = false;
        for (((&x0, &y0), (&x1, &y1)), &area) in kept {
            let apart = (a.xmin > x1) | (a.xmax < x0) | (a.ymin > y1) | (a.ymax < y0);
            let w = a.xmax.min(x1) - a.xmin.max(x0);
            let h = a.ymax.min(y1) - a.ymin.max(y0);
            let inter = if apart { 0.0 } else { w * h };
            let union = a.area + area - inter;
            any |= match overlap {
                Overlap::Ratio => inter / union > threshold,
                Overlap::Scaled => inter > threshold * union,
            };
        }
        any
    }
}

/// The detections blob: one row of `[label + label_offset, score, xmin, ymin, xmax, ymax]` per
/// box (ncnn's `6 × n` 2-D mat; the YOLO heads add 1 for a background class).
pub(crate) fn detections(boxes: &[Scored], label_offset: f32) -> Result<Mat> {
    let rows: Vec<f32> = boxes
        .iter()
        .flat_map(|b| {
            let label = b.label as f32 + label_offset;
            [label, b.score, b.xmin, b.ymin, b.xmax, b.ymax]
        })
        .collect();
    Mat::from_numpy(&[boxes.len(), 6], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(score: f32, label: usize) -> Scored {
        Scored::new([0.0, 0.0, 1.0, 1.0], label, score)
    }

    #[test]
    fn sorts_descending_and_keeps_every_box() {
        let scores = [0.3, 0.9, 0.3, 0.1, 0.5, 0.9, 0.0, 0.7];
        let mut boxes: Vec<Scored> = (scores.iter().enumerate())
            .map(|(i, &s)| scored(s, i))
            .collect();
        sort_descending(&mut boxes);
        let got: Vec<f32> = boxes.iter().map(|b| b.score).collect();
        assert_eq!(got, [0.9, 0.9, 0.7, 0.5, 0.3, 0.3, 0.1, 0.0]);
        let mut labels: Vec<i32> = boxes.iter().map(|b| b.label).collect();
        labels.sort();
        assert_eq!(labels, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn suppression_drops_overlaps_beyond_the_threshold() {
        let a = scored(0.9, 0);
        // half of a: IoU 0.5
        let b = Scored::new([0.0, 0.0, 0.5, 1.0], 0, 0.8);
        let far = Scored::new([2.0, 0.0, 3.0, 1.0], 0, 0.7);
        assert_eq!(suppress(&[a, b, far], 0.45, Overlap::Ratio), [0, 2]);
        assert_eq!(suppress(&[a, b, far], 0.5, Overlap::Ratio), [0, 1, 2]);
        assert_eq!(suppress(&[a, b, far], 0.5, Overlap::Scaled), [0, 1, 2]);
    }
}
