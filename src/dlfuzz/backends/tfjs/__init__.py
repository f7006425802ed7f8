"""TensorFlow.js backends (Node: cpu, wasm; headless Chromium: webgl) and their installer."""
