func.func @main(%arg0: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = tosa.clamp %arg0 {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %1 = tosa.exp %0 : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %2 = tosa.reshape %1 {new_shape = array<i64: 1, 64, 4>} : (tensor<1x8x8x4xf32>) -> tensor<1x64x4xf32>
  %3 = tosa.reshape %2 {new_shape = array<i64: 1, 8, 8, 4>} : (tensor<1x64x4xf32>) -> tensor<1x8x8x4xf32>
  return %3 : tensor<1x8x8x4xf32>
}
