  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %154 = "stablehlo.logistic"(%153) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %155 = "stablehlo.multiply"(%153, %154) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %156 = "stablehlo.minimum"(%153, %155) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/minimum"("testdata/located/minimum.arch":7:25))
    %285 = "stablehlo.logistic"(%284) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %286 = "stablehlo.multiply"(%284, %285) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %287 = "stablehlo.minimum"(%284, %286) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/minimum"("testdata/located/minimum.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.logistic"(%156) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %158 = "stablehlo.multiply"(%156, %157) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %159 = "stablehlo.minimum"(%156, %158) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/minimum"("testdata/located/minimum.arch":7:25))
    %288 = "stablehlo.logistic"(%287) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %289 = "stablehlo.multiply"(%287, %288) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/minimum.arch":7:36))
    %290 = "stablehlo.minimum"(%287, %289) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/minimum"("testdata/located/minimum.arch":7:25))
