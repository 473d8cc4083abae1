  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>) -> (tensor<1x256xf32>) {
    %7 = util.global.load @"model.embed_tokens.weight" : tensor<256x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %8 = "stablehlo.gather"(%7, %arg0) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>} : (tensor<256x64xf32>, tensor<1x16xi32>) -> tensor<1x16x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %9 = "stablehlo.reshape"(%8) : (tensor<1x16x64xf32>) -> tensor<16x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %10 = "stablehlo.reshape"(%9) : (tensor<16x64xf32>) -> tensor<1x16x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %11 = "stablehlo.optimization_barrier"(%10) : (tensor<1x16x64xf32>) -> tensor<1x16x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x256xf32>) {
    %10 = util.global.load @"model.embed_tokens.weight" : tensor<256x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %11 = "stablehlo.gather"(%10, %9) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>} : (tensor<256x64xf32>, tensor<1x1xi32>) -> tensor<1x1x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %12 = "stablehlo.reshape"(%11) : (tensor<1x1x64xf32>) -> tensor<1x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %13 = "stablehlo.reshape"(%12) : (tensor<1x64xf32>) -> tensor<1x1x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
    %14 = "stablehlo.optimization_barrier"(%13) : (tensor<1x1x64xf32>) -> tensor<1x1x64xf32> loc("model.embed_tokens"("testdata/located/embedding.arch":7:29))
