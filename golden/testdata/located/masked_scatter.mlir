  func.func @prefill_16(%arg0: tensor<1x16xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<i32>, %arg5: tensor<1x16x16xf32>) -> (tensor<1x311xf32>) {
    %17 = "stablehlo.constant"() {value = dense<309> : tensor<i32>} : () -> tensor<i32> loc("embed/full_like"("testdata/located/masked_scatter.arch":8:49))
    %18 = "stablehlo.broadcast_in_dim"(%17) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<1x16xi32> loc("embed/full_like"("testdata/located/masked_scatter.arch":8:49))
    %19 = "stablehlo.compare"(%arg0, %18) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi1> loc("embed/eq"("testdata/located/masked_scatter.arch":8:49))
    %20 = "stablehlo.broadcast_in_dim"(%19) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x16xi1>) -> tensor<1x16x16xi1> loc("embed/masked_scatter"("testdata/located/masked_scatter.arch":8:12))
    %21 = "stablehlo.select"(%20, %arg5, %16) : (tensor<1x16x16xi1>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> tensor<1x16x16xf32> loc("embed/masked_scatter"("testdata/located/masked_scatter.arch":8:12))
  func.func @decode_1(%arg0: tensor<1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<1xi32>) -> (tensor<1x311xf32>) {
    %18 = "stablehlo.constant"() {value = dense<309> : tensor<i32>} : () -> tensor<i32> loc("embed/full_like"("testdata/located/masked_scatter.arch":8:49))
    %19 = "stablehlo.broadcast_in_dim"(%18) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<1x1xi32> loc("embed/full_like"("testdata/located/masked_scatter.arch":8:49))
    %20 = "stablehlo.compare"(%9, %19) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi1> loc("embed/eq"("testdata/located/masked_scatter.arch":8:49))
