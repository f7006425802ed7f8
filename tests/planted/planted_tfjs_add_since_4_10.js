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

// The wrong kernel itself is planted_tfjs_add.js's (a path next to this file).
const plantAdd = require('./planted_tfjs_add.js');

module.exports = function plantAddSince410(tf) {
  if (atLeast(coreVersion(tf), SINCE)) {
    plantAdd(tf);
  }
};
