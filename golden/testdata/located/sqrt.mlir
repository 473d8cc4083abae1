  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.multiply"(%156, %156) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %158 = "stablehlo.sqrt"(%157) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
    %289 = "stablehlo.multiply"(%288, %288) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %290 = "stablehlo.sqrt"(%289) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %160 = "stablehlo.multiply"(%159, %159) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %161 = "stablehlo.sqrt"(%160) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
    %292 = "stablehlo.multiply"(%291, %291) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %293 = "stablehlo.sqrt"(%292) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
