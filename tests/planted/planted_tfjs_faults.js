// Test-only: native faults in TF.js' Neg kernel (cpu and wasm), chosen by the input size:
// 13 elements abort the Node process (SIGABRT), 17 throw a wasm trap (the error a real
// out-of-bounds access raises), 19 hang forever. Other sizes run the real kernel.
module.exports = function plantFaults(tf) {
  for (const backendName of ['cpu', 'wasm']) {
    const real = tf.getKernel('Neg', backendName);
    if (!real) continue;
    tf.unregisterKernel('Neg', backendName);
    tf.registerKernel({
      kernelName: 'Neg',
      backendName,
      kernelFunc(args) {
        const size = args.inputs.x.shape.reduce((a, b) => a * b, 1);
        if (size === 13) process.abort();
        if (size === 17) throw new WebAssembly.RuntimeError('memory access out of bounds');
        if (size === 19) for (;;) { /* hang */ }
        return real.kernelFunc(args);
      },
    });
  }
};
