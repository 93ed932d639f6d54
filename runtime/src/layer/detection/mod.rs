//! Detection heads: PriorBox (SSD's anchor boxes), DetectionOutput (SSD's decoding and
//! per-class suppression), YoloDetectionOutput (YOLOv2) and Yolov3DetectionOutput (YOLOv3/v4),
//! and the two-stage detectors' Proposal (Faster R-CNN's RPN), ROIPooling, ROIAlign and
//! PSROIPooling (R-FCN); `boxes` holds the ranking,
//! suppression and detections blob the heads share, `yolo_grid` the YOLO heads' reading of
//! their grids, `roi` the ROI layers' inputs and bilinear sample. On the CPU: their outputs' sizes depend on the values
//! (ncnn's Vulkan has none of them either), and a net's GPU blobs come down once.

pub(crate) mod boxes;
pub mod detectionoutput;
pub mod priorbox;
pub mod proposal;
pub mod psroipooling;
pub(crate) mod roi;
pub mod roialign;
pub mod roipooling;
pub(crate) mod yolo_grid;
pub mod yolodetectionoutput;
pub mod yolov3detectionoutput;
