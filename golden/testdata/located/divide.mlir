  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %156 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %157 = "stablehlo.broadcast_in_dim"(%156) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %158 = "stablehlo.divide"(%155, %157) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %289 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %290 = "stablehlo.broadcast_in_dim"(%289) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %291 = "stablehlo.divide"(%288, %290) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %159 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %160 = "stablehlo.broadcast_in_dim"(%159) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %161 = "stablehlo.divide"(%158, %160) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %292 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %293 = "stablehlo.broadcast_in_dim"(%292) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %294 = "stablehlo.divide"(%291, %293) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
