  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %154 = "stablehlo.multiply"(%153, %153) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/pow"("testdata/located/pow.arch":7:25))
    %283 = "stablehlo.multiply"(%282, %282) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/pow"("testdata/located/pow.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.multiply"(%156, %156) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/pow"("testdata/located/pow.arch":7:25))
    %286 = "stablehlo.multiply"(%285, %285) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/pow"("testdata/located/pow.arch":7:25))
