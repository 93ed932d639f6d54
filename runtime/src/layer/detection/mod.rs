//! Detection heads: PriorBox (SSD's anchor boxes), DetectionOutput (SSD's decoding and
//! per-class suppression), YoloDetectionOutput (YOLOv2) and Yolov3DetectionOutput (YOLOv3/v4);
//! `boxes` holds the ranking, suppression and detections blob they share, `yolo_grid` the
//! YOLO heads' reading of their grids. On the CPU: their outputs' sizes depend on the values
//! (ncnn's Vulkan has none of the three heads either), and a net's GPU blobs come down once.

pub(crate) mod boxes;
pub mod detectionoutput;
pub mod priorbox;
pub(crate) mod yolo_grid;
pub mod yolodetectionoutput;
pub mod yolov3detectionoutput;
