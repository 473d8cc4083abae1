// Test module for rt/iree: a named parameter, a mutable global that
// persists across calls, a rank-0 i32 argument and a rank-0 result.
module @toy {
  // Read-only weight, bound at load time to the named parameter "model"::"w".
  util.global private @w = #flow.parameter.named<"model"::"w"> : tensor<4xf32>
  // Mutable state, like a KV cache; starts at zero.
  util.global private mutable @state = dense<0.0> : tensor<4xf32>

  // state[idx] = x[0]; returns (state + w, sum(state + w)).
  func.func @step(%idx: tensor<i32>, %x: tensor<1xf32>) -> (tensor<4xf32>, tensor<f32>) {
    %s = util.global.load @state : tensor<4xf32>
    %u = stablehlo.dynamic_update_slice %s, %x, %idx : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
    util.global.store %u, @state : tensor<4xf32>
    %w = util.global.load @w : tensor<4xf32>
    %r = stablehlo.add %u, %w : tensor<4xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %sum = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %r, %sum : tensor<4xf32>, tensor<f32>
  }
}
