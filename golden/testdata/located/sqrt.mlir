  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %154 = "stablehlo.multiply"(%153, %153) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %155 = "stablehlo.sqrt"(%154) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
    %284 = "stablehlo.multiply"(%283, %283) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %285 = "stablehlo.sqrt"(%284) : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.multiply"(%156, %156) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %158 = "stablehlo.sqrt"(%157) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
    %287 = "stablehlo.multiply"(%286, %286) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/mul"("testdata/located/sqrt.arch":7:32))
    %288 = "stablehlo.sqrt"(%287) : (tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/sqrt"("testdata/located/sqrt.arch":7:25))
