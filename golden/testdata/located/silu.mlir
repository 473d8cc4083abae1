  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.logistic"(%156) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %158 = "stablehlo.multiply"(%156, %157) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %289 = "stablehlo.logistic"(%288) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %290 = "stablehlo.multiply"(%288, %289) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %160 = "stablehlo.logistic"(%159) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %161 = "stablehlo.multiply"(%159, %160) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %292 = "stablehlo.logistic"(%291) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %293 = "stablehlo.multiply"(%291, %292) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
