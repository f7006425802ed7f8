// Test-only: a wrong backward of tanh in TF.js (every backend: gradients are kernel-free
// JS, shared by cpu, wasm and webgl). The forward kernel is tfjs' own; the gradient uses
// 1 - y * |y| for 1 - y^2, so it is wrong wherever the output is negative (the sign bug
// of a hand-written derivative). Loaded in the worker, or in a reproducer with
// `require(this)(tf)`.
module.exports = function plantTanhBackward(tf) {
  tf.registerGradient({
    kernelName: 'Tanh',
    outputsToSave: [true],
    gradFunc(dy, saved) {
      const [y] = saved;
      return { x: () => tf.mul(dy, tf.sub(tf.scalar(1), tf.mul(y, tf.abs(y)))) };
    },
  });
};
