module @codegen_test {
  stream.executable private @kernels {
    // printed verbatim
  }
  util.global private @"p.w" = #flow.parameter.named<"model"::"p.w"> : tensor<4xf32>
  util.global private mutable @state = dense<0.0e+00> : tensor<5xf32>

  func.func @sum(%arg0: tensor<4xf32>) -> (tensor<f32>) {
    %0 = util.global.load @"p.w" : tensor<4xf32> loc("sum"("test.arch":1:1))
    %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("sum"("test.arch":1:1))
    %2 = "stablehlo.constant"() {value = dense<0.0e+00> : tensor<f32>} : () -> tensor<f32> loc("sum"("test.arch":1:1))
    %3 = "stablehlo.reduce"(%1, %2) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%c) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32> loc("sum"("test.arch":1:1))
    func.return %3 : tensor<f32>
  }

  func.func @prefix(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> (tensor<f32>) {
    %0 = "stablehlo.constant"() {value = dense<0> : tensor<1xi32>} : () -> tensor<1xi32>
    %1 = "stablehlo.constant"() {value = dense<1> : tensor<1xi32>} : () -> tensor<1xi32>
    %2 = "stablehlo.reshape"(%arg1) : (tensor<i32>) -> tensor<1xi32>
    %3 = "stablehlo.real_dynamic_slice"(%arg0, %0, %2, %1) : (tensor<4xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
    %4 = "stablehlo.constant"() {value = dense<0.0e+00> : tensor<f32>} : () -> tensor<f32>
    %5 = "stablehlo.reduce"(%3, %4) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%c) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<f32>) -> tensor<f32>
    func.return %5 : tensor<f32>
  }

  func.func @twice(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {
    %0 = "stablehlo.constant"() {value = dense<2.0e+00> : tensor<4xf32>} : () -> tensor<4xf32>
    %8 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %1:2 = "stablehlo.while"(%8, %arg0) ({
    ^bb0(%w1c0: tensor<i32>, %w1c1: tensor<4xf32>):
      %w1n = "stablehlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
      %w1lt = "stablehlo.compare"(%w1c0, %w1n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%w1lt) : (tensor<i1>) -> ()
    }, {
    ^bb0(%w1b0: tensor<i32>, %w1b1: tensor<4xf32>):
      %2 = "stablehlo.convert"(%w1b0) : (tensor<i32>) -> tensor<f32>
      %3 = "stablehlo.broadcast_in_dim"(%2) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
      %4 = "stablehlo.multiply"(%w1b1, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %5 = "stablehlo.add"(%4, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %6 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
      %7 = "stablehlo.add"(%w1b0, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%7, %5) : (tensor<i32>, tensor<4xf32>) -> ()
    }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
    func.return %1#1 : tensor<4xf32>
  }

  func.func @reset() -> () {
    %0 = "stablehlo.constant"() {value = dense<0x7F800000> : tensor<f32>} : () -> tensor<f32>
    %1 = "stablehlo.reshape"(%0) : (tensor<f32>) -> tensor<1xf32>
    %2 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %3 = "stablehlo.reshape"(%2) : (tensor<f32>) -> tensor<1xf32>
    %4 = "stablehlo.constant"() {value = dense<1.0e-01> : tensor<f32>} : () -> tensor<f32>
    %5 = "stablehlo.reshape"(%4) : (tensor<f32>) -> tensor<1xf32>
    %6 = "stablehlo.constant"() {value = dense<3.4028235e+38> : tensor<f32>} : () -> tensor<f32>
    %7 = "stablehlo.reshape"(%6) : (tensor<f32>) -> tensor<1xf32>
    %8 = "stablehlo.constant"() {value = dense<1.0e-45> : tensor<f32>} : () -> tensor<f32>
    %9 = "stablehlo.reshape"(%8) : (tensor<f32>) -> tensor<1xf32>
    %10 = "stablehlo.concatenate"(%1, %3, %5, %7, %9) {dimension = 0 : i64} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<5xf32>
    util.global.store %10, @state : tensor<5xf32>
    func.return
  }

  func.func @get() -> (tensor<5xf32>) {
    %0 = util.global.load @state : tensor<5xf32>
    func.return %0 : tensor<5xf32>
  }

  func.func @dispatch(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {
    %0 = arith.constant 4 : index
    %1 = flow.dispatch @kernels::@scale[%0](%arg0, %0) : (tensor<4xf32>, index) -> tensor<4xf32>
    func.return %1 : tensor<4xf32>
  }
}
