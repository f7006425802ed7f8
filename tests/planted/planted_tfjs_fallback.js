// Test-only: switches TF.js off WebGL inside the page (tf.setBackend('cpu')), the silent
// fallback dlfuzz must refuse to report as webgl results.
module.exports = function plantFallback(tf) {
  tf.setBackend('cpu');
};
