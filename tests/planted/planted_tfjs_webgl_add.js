// Test-only: a wrong Add kernel in TF.js' webgl backend (loaded in the Chromium page, or in an
// HTML reproducer through run_html.js --patch). float32 inputs whose last dimension is 5 or more
// get a - b instead of a + b; everything else runs the real kernel.
module.exports = function plantAdd(tf) {
  const backendName = 'webgl';
  const real = tf.getKernel('Add', backendName);
  const sub = tf.getKernel('Sub', backendName);
  tf.unregisterKernel('Add', backendName);
  tf.registerKernel({
    kernelName: 'Add',
    backendName,
    kernelFunc(args) {
      const a = args.inputs.a;
      if (a.dtype === 'float32' && a.shape.length > 0 && a.shape[a.shape.length - 1] >= 5) {
        return sub.kernelFunc(args);
      }
      return real.kernelFunc(args);
    },
  });
};
