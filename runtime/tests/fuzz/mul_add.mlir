func.func @main(%arg0: tensor<64xf32>, %arg1: tensor<64xf32>) -> tensor<64xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %arg0, %arg1, %shift : (tensor<64xf32>, tensor<64xf32>, tensor<1xi8>) -> tensor<64xf32>
  %1 = tosa.add %0, %arg1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %2 = tosa.abs %1 : (tensor<64xf32>) -> tensor<64xf32>
  return %2 : tensor<64xf32>
}
