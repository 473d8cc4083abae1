  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %158 = "stablehlo.broadcast_in_dim"(%157) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %159 = "stablehlo.divide"(%156, %158) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %290 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %291 = "stablehlo.broadcast_in_dim"(%290) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %292 = "stablehlo.divide"(%289, %291) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %160 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %161 = "stablehlo.broadcast_in_dim"(%160) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %162 = "stablehlo.divide"(%159, %161) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %293 = "stablehlo.constant"() {value = dense<3.0e+00> : tensor<f32>} : () -> tensor<f32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %294 = "stablehlo.broadcast_in_dim"(%293) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
    %295 = "stablehlo.divide"(%292, %294) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/divide"("testdata/located/divide.arch":7:25))
