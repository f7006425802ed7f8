// Test-only: tfjs' cpu Relu kernel leaves one element of its output to whatever the
// memory held, as a kernel that reads an element it never wrote would: for inputs of 6
// or more elements the last output element gets a value left over from earlier calls
// (a counter here), so the same input gives different outputs from run to run.
let leftover = 0;
module.exports = function plantGarbage(tf) {
  const backendName = 'cpu';
  const real = tf.getKernel('Relu', backendName);
  tf.unregisterKernel('Relu', backendName);
  tf.registerKernel({
    kernelName: 'Relu',
    backendName,
    kernelFunc(args) {
      const out = real.kernelFunc(args);
      const size = out.shape.reduce((a, b) => a * b, 1);
      if (out.dtype === 'float32' && size >= 6) {
        const values = args.backend.data.get(out.dataId).values;
        leftover += 1;
        values[size - 1] = leftover * 0.5;
      }
      return out;
    },
  });
};
