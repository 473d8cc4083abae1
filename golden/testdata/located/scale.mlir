  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %154 = "stablehlo.constant"() {value = dense<5.0e-01> : tensor<f32>} : () -> tensor<f32> loc("model.layers.0/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %155 = "stablehlo.broadcast_in_dim"(%154) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %156 = "stablehlo.multiply"(%153, %155) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.0/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %285 = "stablehlo.constant"() {value = dense<5.0e-01> : tensor<f32>} : () -> tensor<f32> loc("model.layers.1/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %286 = "stablehlo.broadcast_in_dim"(%285) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %287 = "stablehlo.multiply"(%284, %286) : (tensor<1x16x128xf32>, tensor<1x16x128xf32>) -> tensor<1x16x128xf32> loc("model.layers.1/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %157 = "stablehlo.constant"() {value = dense<5.0e-01> : tensor<f32>} : () -> tensor<f32> loc("model.layers.0/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %158 = "stablehlo.broadcast_in_dim"(%157) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %159 = "stablehlo.multiply"(%156, %158) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.0/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %288 = "stablehlo.constant"() {value = dense<5.0e-01> : tensor<f32>} : () -> tensor<f32> loc("model.layers.1/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %289 = "stablehlo.broadcast_in_dim"(%288) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
    %290 = "stablehlo.multiply"(%287, %289) : (tensor<1x1x128xf32>, tensor<1x1x128xf32>) -> tensor<1x1x128xf32> loc("model.layers.1/layer/mlp/act/scale"("testdata/located/scale.arch":7:25))
