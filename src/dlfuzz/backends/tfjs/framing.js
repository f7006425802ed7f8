// The pipe protocol of dlfuzz's Node children (worker.js, webgl_driver.js), shared so the
// two cannot drift apart: each frame is an 8-byte prefix (header length, body length, both
// uint32 little-endian), a JSON header and the raw body bytes. Requests come on stdin;
// replies go to their own descriptor, so whatever tfjs prints cannot corrupt them.
'use strict';

const fs = require('fs');

function option(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

// A send(header, body) writing whole frames to fd (body: a Buffer, may be empty).
function sender(fd) {
  return function send(header, body) {
    const head = Buffer.from(JSON.stringify(header));
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32LE(head.length, 0);
    prefix.writeUInt32LE(body.length, 4);
    const all = Buffer.concat([prefix, head, body]);
    let done = 0;
    while (done < all.length) done += fs.writeSync(fd, all, done, all.length - done);
  };
}

// Calls onFrame(header, body) for each complete frame on stdin, and onEnd at its end.
function readFrames(onFrame, onEnd) {
  let pending = Buffer.alloc(0);
  process.stdin.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const headLen = pending.readUInt32LE(0);
      const bodyLen = pending.readUInt32LE(4);
      if (pending.length < 8 + headLen + bodyLen) return;
      const header = JSON.parse(pending.subarray(8, 8 + headLen).toString('utf8'));
      const body = Buffer.from(pending.subarray(8 + headLen, 8 + headLen + bodyLen));
      pending = pending.subarray(8 + headLen + bodyLen);
      onFrame(header, body);
    }
  });
  process.stdin.on('end', onEnd);
}

module.exports = { option, sender, readFrames };
