  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %156 = "stablehlo.logistic"(%155) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %157 = "stablehlo.multiply"(%155, %156) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %158 = "stablehlo.multiply"(%155, %157) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/mul"("testdata/located/mul.arch":7:25))
    %289 = "stablehlo.logistic"(%288) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %290 = "stablehlo.multiply"(%288, %289) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %291 = "stablehlo.multiply"(%288, %290) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/mul"("testdata/located/mul.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %159 = "stablehlo.logistic"(%158) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %160 = "stablehlo.multiply"(%158, %159) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %161 = "stablehlo.multiply"(%158, %160) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/mul"("testdata/located/mul.arch":7:25))
    %292 = "stablehlo.logistic"(%291) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %293 = "stablehlo.multiply"(%291, %292) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/silu"("testdata/located/mul.arch":7:32))
    %294 = "stablehlo.multiply"(%291, %293) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/mul"("testdata/located/mul.arch":7:25))
