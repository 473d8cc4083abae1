  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %154 = "stablehlo.logistic"(%153) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %155 = "stablehlo.multiply"(%153, %154) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %284 = "stablehlo.logistic"(%283) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %285 = "stablehlo.multiply"(%283, %284) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.logistic"(%156) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %158 = "stablehlo.multiply"(%156, %157) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %287 = "stablehlo.logistic"(%286) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
    %288 = "stablehlo.multiply"(%286, %287) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/silu.arch":7:25))
