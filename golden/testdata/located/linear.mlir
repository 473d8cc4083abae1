  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %321 = "stablehlo.reshape"(%7) : (tensor<256x64xf32>) -> tensor<256x64xf32> loc("model.embed_tokens"("testdata/located/linear.arch":7:26))
    %322 = "stablehlo.reshape"(%321) : (tensor<256x64xf32>) -> tensor<256x64xf32> loc("model.embed_tokens"("testdata/located/linear.arch":7:26))
    %323 = "stablehlo.dot_general"(%320, %322) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<1x1x64xf32>, tensor<256x64xf32>) -> tensor<1x1x256xf32> loc("model.embed_tokens"("testdata/located/linear.arch":7:26))
    util.global.store %225, @kv_cache : tensor<4x1x256x2x16xf32> loc("logits"("testdata/located/linear.arch":7:26))
    %324 = "stablehlo.reshape"(%323) : (tensor<1x1x256xf32>) -> tensor<1x256xf32> loc("logits"("testdata/located/linear.arch":7:26))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %321 = "stablehlo.reshape"(%10) : (tensor<256x64xf32>) -> tensor<256x64xf32> loc("model.embed_tokens"("testdata/located/linear.arch":7:26))
    %322 = "stablehlo.reshape"(%321) : (tensor<256x64xf32>) -> tensor<256x64xf32> loc("model.embed_tokens"("testdata/located/linear.arch":7:26))
    %323 = "stablehlo.dot_general"(%320, %322) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<1x1x64xf32>, tensor<256x64xf32>) -> tensor<1x1x256xf32> loc("model.embed_tokens"("testdata/located/linear.arch":7:26))
    util.global.store %228, @kv_cache : tensor<4x1x256x2x16xf32> loc("logits"("testdata/located/linear.arch":7:26))
    %324 = "stablehlo.reshape"(%323) : (tensor<1x1x256xf32>) -> tensor<1x256xf32> loc("logits"("testdata/located/linear.arch":7:26))
