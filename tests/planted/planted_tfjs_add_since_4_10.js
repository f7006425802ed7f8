// Test-only: a planted regression in TF.js' cpu backend (loaded in the Node worker, or in
// a reproducer with `require(this)(tf)`). On releases >= 4.10.0 (the loaded tfjs-core's
// version, compared number by number), float32 inputs whose last dimension is 5 or more
// get a - b instead of a + b; older releases keep the real kernel untouched, so
// `dlfuzz bisect` over 4.1.0, 4.10.0, 4.22.0 must report 4.10.0 as the first bad release.
const SINCE = [4, 10, 0];

function coreVersion(tf) {
  return tf.version_core || (tf.version && tf.version['tfjs-core']) || '0.0.0';
}

function atLeast(version, since) {
  const parts = String(version).split(/[.+-]/).slice(0, since.length)
    .map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < since.length; i += 1) {
    const have = parts[i] || 0;
    if (have !== since[i]) {
      return have > since[i];
    }
  }
  return true;
}

module.exports = function plantAddSince410(tf) {
  if (!atLeast(coreVersion(tf), SINCE)) {
    return;
  }
  const backendName = 'cpu';
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
